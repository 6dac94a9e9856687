def default_limit():
    return 10


class Client:
    LIMIT = default_limit()

    class Options:
        def __init__(self, retries):
            self.retries = retries

        @classmethod
        def default(cls):
            return cls(3)

    def __init__(self):
        self.options = Client.Options.default()


def main():
    print(Client().options.retries, Client.LIMIT)


main()
