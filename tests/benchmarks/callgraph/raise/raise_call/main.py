class NotFound(Exception):
    def __init__(self, key):
        super().__init__(f"missing {key}")
        self.key = key


def lookup(table, key):
    if key not in table:
        raise NotFound(key)
    return table[key]


def main():
    try:
        lookup({}, "x")
    except NotFound as exc:
        print(exc.key)


main()
