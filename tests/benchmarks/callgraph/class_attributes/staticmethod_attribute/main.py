def parse_int(text):
    return int(text)


def parse_float(text):
    return float(text)


class IntField:
    parser = staticmethod(parse_int)

    def load(self, text):
        return self.parser(text)


class FloatField(IntField):
    parser = staticmethod(parse_float)


def main():
    print(IntField().load("3"), FloatField().load("2.5"))


main()
