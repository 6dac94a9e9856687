class Pair:
    def __init__(self, left, right):
        self.left = left
        self.right = right

    def __iter__(self):
        return iter((self.left, self.right))


def main():
    pair = Pair(1, 2)
    doubled = [v * 2 for v in pair]
    a, b = pair
    print(doubled, a + b, list(pair))


main()
