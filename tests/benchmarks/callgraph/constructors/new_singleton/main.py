class Registry:
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance.setup()
        return cls._instance

    def __init__(self):
        self.opened = getattr(self, "opened", 0) + 1

    def setup(self):
        self.entries = {}


def main():
    a = Registry()
    b = Registry()
    print(a is b, a.opened)


main()
