class Positive:
    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, objtype=None):
        return getattr(obj, self.name)

    def __set__(self, obj, value):
        if value <= 0:
            raise ValueError(value)
        setattr(obj, self.name, value)


class Product:
    price = Positive()

    def __init__(self, price):
        self.price = price


def main():
    p = Product(3)
    p.price = 4
    print(p.price)


main()
