def parse(text):
    return [int(part) for part in text.split(",")]


def total(values):
    if not values:
        return 0
    return values[0] + total(values[1:])


def report(text):
    values = parse(text)
    return f"{len(values)} values, sum {total(values)}"


def main():
    print(report("1,2,3"))


if __name__ == "__main__":
    main()
