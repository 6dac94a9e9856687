class Token:
    def __init__(self, kind, text):
        self.kind = kind
        self.text = text

    def __repr__(self):
        return f"{self.kind}:{self.text}"


def tokenize(text):
    return [Token("word", part) for part in text.split()]


def main():
    tokens = tokenize("a b")
    print(" ".join(str(t) for t in tokens))


main()
