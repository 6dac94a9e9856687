def describe(self):
    return f"{type(self).__name__} with {self.size()} items"


class Basket:
    def __init__(self, items):
        self.items = items

    def size(self):
        return len(self.items)

    __str__ = describe
    summary = describe


def main():
    basket = Basket(["apple"])
    print(basket.summary())


main()
