class Circle:
    def __init__(self, r):
        self.r = r

    def area(self):
        return 3.14 * self.r * self.r


class Rect:
    def __init__(self, w, h):
        self.w = w
        self.h = h

    def area(self):
        return self.w * self.h

    def diagonal(self):
        return (self.w ** 2 + self.h ** 2) ** 0.5


def describe(shape):
    if isinstance(shape, Rect):
        return f"rect, diagonal {shape.diagonal():.1f}"
    return f"circle of area {shape.area():.1f}"


def main():
    print(describe(Circle(1)), describe(Rect(3, 4)))


main()
