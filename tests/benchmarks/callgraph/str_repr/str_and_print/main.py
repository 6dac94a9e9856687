class Money:
    def __init__(self, cents):
        self.cents = cents

    def __str__(self):
        return f"${units(self.cents)}.{self.cents % 100:02d}"


def units(cents):
    return cents // 100


def main():
    price = Money(1999)
    label = str(price)
    print(price)
    print(label)


main()
