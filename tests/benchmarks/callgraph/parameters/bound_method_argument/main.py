class Counter:
    def __init__(self):
        self.count = 0

    def increment(self, amount):
        self.count += amount


def each(values, callback):
    for value in values:
        _call(callback, value)


def _call(callback, value):
    callback(value)


def main():
    counter = Counter()
    each([1, 2, 3], counter.increment)
    print(counter.count)


main()
