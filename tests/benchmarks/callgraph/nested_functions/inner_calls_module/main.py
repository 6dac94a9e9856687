def validate(value):
    if value < 0:
        raise ValueError(value)
    return value


def process(values):
    def checked(value):
        return validate(value) * 2

    return [checked(v) for v in values]


def main():
    print(process([1, 2]))


main()
