import attrs


def to_upper(value):
    return value.upper()


@attrs.define
class Ticket:
    code: str = attrs.field(converter=to_upper)
    seats: int = 1
    label: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self):
        self.label = describe(self.code, self.seats)


def describe(code, seats):
    return f"{code} x{seats}"


def main():
    print(Ticket("ab12", 2).label)


main()
