def identity_key(item):
    return item


def length_key(item):
    return len(item)


def longest(items, key=identity_key):
    best = None
    for item in items:
        if best is None or key(item) > key(best):
            best = item
    return best


def main():
    print(longest(["b", "a"]), longest(["bb", "a"], key=length_key))


main()
