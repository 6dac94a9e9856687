import functools


class Shape:
    def __init__(self, w, h):
        self.w = w
        self.h = h

    def area(self):
        return self.w * self.h


def merge(a, b):
    return {**a, **b}


def main():
    settings = functools.reduce(merge, [{"a": 1}, {"b": 2}], {})
    smallest = min([Shape(1, 2), Shape(3, 1)], key=Shape.area)
    print(settings, smallest.area())


main()
