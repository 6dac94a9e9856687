class Vector:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vector(self.x + other.x, self.y + other.y)

    def __radd__(self, other):
        return self if other == 0 else self + other

    def __mul__(self, k):
        return Vector(self.x * k, self.y * k)


def main():
    a = Vector(1, 2)
    b = a + Vector(3, 4)
    c = b * 2
    total = sum([a, b, c])
    print(total.x, total.y)


main()
