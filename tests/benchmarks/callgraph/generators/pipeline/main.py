def read_lines(text):
    for line in text.splitlines():
        yield line


def without_comments(lines):
    for line in lines:
        if not line.startswith("#"):
            yield line


def parse(lines):
    for line in lines:
        yield split_pair(line)


def split_pair(line):
    key, _, value = line.partition("=")
    return key, value


def main():
    text = "# config\na=1\nb=2"
    records = parse(without_comments(read_lines(text)))
    print(dict(records))


main()
