class Parser:
    def __init__(self, strict):
        self.handle = self.fail if strict else self.skip

    def fail(self, line):
        raise ValueError(line)

    def skip(self, line):
        return None

    def parse(self, lines):
        out = []
        for line in lines:
            if line.isdigit():
                out.append(int(line))
            else:
                self.handle(line)
        return out


def main():
    print(Parser(strict=False).parse(["1", "x", "2"]))


main()
