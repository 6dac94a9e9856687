class Shape:
    def __init__(self, name):
        self.name = name

    def describe(self):
        return self.name


class Square(Shape):
    def __init__(self, side):
        super().__init__("square")
        self.side = side

    def describe(self):
        return super().describe() + f" of side {self.side}"


def main():
    print(Square(2).describe())


main()
