from shop import Order, total


def main():
    order = Order(["pen", "ink"])
    print(total(order))


main()
