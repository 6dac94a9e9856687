class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __repr__(self):
        return f"Point({self.x}, {self.y})"


def debug(points):
    first = repr(points[0])
    return f"{first} then {points[1]!r}"


def main():
    points = [Point(0, 0), Point(1, 2)]
    print(debug(points))
    print(points)


main()
