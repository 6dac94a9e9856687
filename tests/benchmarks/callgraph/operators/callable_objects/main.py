class Multiplier:
    def __init__(self, factor):
        self.factor = factor

    def __call__(self, value):
        return scale(value, self.factor)


def scale(value, factor):
    return value * factor


def apply_all(fns, value):
    return [fn(value) for fn in fns]


def main():
    double = Multiplier(2)
    print(double(5), apply_all([double, Multiplier(3)], 1))


main()
