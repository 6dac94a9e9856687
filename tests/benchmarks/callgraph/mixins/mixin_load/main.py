class Base:
    def load(self):
        return "base data"

    def dump(self):
        return f"dump: {self.load()}"


class JsonMixin:
    def load(self):
        return "json data"


class JsonRecord(JsonMixin, Base):
    pass


def main():
    print(JsonRecord().dump())


main()
