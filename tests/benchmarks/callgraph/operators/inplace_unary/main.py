class Balance:
    def __init__(self, amount):
        self.amount = amount

    def __iadd__(self, other):
        self.amount += other
        return self

    def __neg__(self):
        return Balance(-self.amount)

    def __abs__(self):
        return Balance(abs(self.amount))


def main():
    b = Balance(5)
    b += 10
    debt = -b
    print(b.amount, debt.amount, abs(debt).amount)


main()
