def add(a, b):
    return a + b


def sub(a, b):
    return a - b


class Calculator:
    OPERATIONS = {"+": add, "-": sub}

    def evaluate(self, a, op, b):
        return self.OPERATIONS[op](a, b)


def main():
    calc = Calculator()
    print(calc.evaluate(1, "+", 2), calc.evaluate(5, "-", 3))


main()
