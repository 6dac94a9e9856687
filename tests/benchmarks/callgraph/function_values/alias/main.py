def fast(n):
    return n * 2


def slow(n):
    return sum(n for _ in range(2))


def compute(n, precise):
    impl = fast
    if precise:
        impl = slow
    return impl(n)


def main():
    print(compute(3, False), compute(3, True))


main()
