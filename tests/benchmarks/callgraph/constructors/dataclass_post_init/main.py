from dataclasses import dataclass, field


def new_tags():
    return ["new"]


def normalize(name):
    return name.strip().lower()


@dataclass
class Item:
    name: str
    price: float
    tags: list = field(default_factory=new_tags)

    def __post_init__(self):
        self.name = normalize(self.name)


def main():
    item = Item("  Lamp ", 9.5)
    print(item)


main()
