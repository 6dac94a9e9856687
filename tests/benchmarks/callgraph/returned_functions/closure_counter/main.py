def make_counter(start):
    count = start

    def step():
        nonlocal count
        count = advance(count)
        return count

    return step


def advance(value):
    return value + 1


def main():
    tick = make_counter(10)
    tick()
    print(tick())


main()
