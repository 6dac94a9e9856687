def make_point(x, y):
    class Point:
        def __init__(self, x, y):
            self.x = x
            self.y = y

        def norm(self):
            return (self.x ** 2 + self.y ** 2) ** 0.5

    point = Point(x, y)
    return point.norm()


def main():
    print(make_point(3, 4))


main()
