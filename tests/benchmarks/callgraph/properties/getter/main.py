import math


class Circle:
    def __init__(self, radius):
        self.radius = radius

    @property
    def area(self):
        return math.pi * square(self.radius)


def square(x):
    return x * x


def main():
    c = Circle(2)
    print(round(c.area, 2))


main()
