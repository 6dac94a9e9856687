class Buffer:
    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)

    def getvalue(self):
        return "".join(self.parts)


def render(rows):
    buffer = Buffer()
    write = buffer.write
    for row in rows:
        write(row)
        write("\n")
    return buffer.getvalue()


def main():
    print(render(["a", "b"]))


main()
