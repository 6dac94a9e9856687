class Thermostat:
    def __init__(self, target):
        self.target = target

    @property
    def target(self):
        return self._target

    @target.setter
    def target(self, value):
        self._target = clamp(value, 5, 30)


def clamp(value, low, high):
    return max(low, min(high, value))


def main():
    t = Thermostat(40)
    t.target = 2
    print(t.target)


main()
