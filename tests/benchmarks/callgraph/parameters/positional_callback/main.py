def apply(fn, values):
    return [fn(v) for v in values]


def square(x):
    return x * x


def negate(x):
    return -x


def main():
    print(apply(square, [1, 2]), apply(negate, [3]))


main()
