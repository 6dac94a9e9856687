def on_each(items, action):
    for item in items:
        action(item)


def emit(item):
    print("item", item)


def main():
    on_each([1, 2], lambda item: emit(item * 10))


main()
