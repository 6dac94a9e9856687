class Lines:
    def __init__(self, text):
        self.parts = text.split("\n")
        self.index = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.index >= len(self.parts):
            raise StopIteration
        self.index += 1
        return self.parts[self.index - 1]


def header(text):
    lines = iter(Lines(text))
    return next(lines)


def main():
    print(header("title\nbody"))


main()
