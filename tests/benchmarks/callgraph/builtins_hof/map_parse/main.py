def parse_line(line):
    key, _, value = line.partition("=")
    return key.strip(), value.strip()


def parse(text):
    return dict(map(parse_line, text.splitlines()))


def main():
    print(parse("a = 1\nb = 2"))


main()
