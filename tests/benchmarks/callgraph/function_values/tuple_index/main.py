def on_even(n):
    return n // 2


def on_odd(n):
    return 3 * n + 1


def unknown(n):
    return n


HANDLERS = (on_even, on_odd)
NAMED = {"even": on_even}


def step(n):
    return HANDLERS[n % 2](n)


def by_name(name, n):
    handler = NAMED.get(name, unknown)
    return handler(n)


def main():
    print(step(6), step(7), by_name("even", 4), by_name("other", 4))


main()
