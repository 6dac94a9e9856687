def label(value):
    return f"<{value}>"


def flatten(tree):
    for node in tree:
        if isinstance(node, list):
            yield from flatten(node)
        else:
            yield label(node)


def main():
    print(list(flatten([1, [2, [3]], 4])))


main()
