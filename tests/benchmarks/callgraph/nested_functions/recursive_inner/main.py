def leaf_count(tree):
    def walk(node):
        children = node.get("children", [])
        if not children:
            return 1
        return sum(walk(child) for child in children)

    return walk(tree)


def main():
    tree = {"children": [{}, {"children": [{}, {}]}]}
    print(leaf_count(tree))


main()
