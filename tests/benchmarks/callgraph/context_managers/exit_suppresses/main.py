class Ignore:
    def __init__(self, *kinds):
        self.kinds = kinds

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc, tb):
        return exc_type is not None and issubclass(exc_type, self.kinds)


def risky():
    raise KeyError("gone")


def main():
    with Ignore(KeyError):
        risky()
    print("survived")


main()
