class Base:
    def __init__(self, name):
        self.name = name


class TimestampMixin:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.created = now()


def now():
    return 1700000000


class Note(TimestampMixin, Base):
    def __init__(self, name, text):
        super().__init__(name)
        self.text = text


def main():
    note = Note("todo", "buy milk")
    print(note.name, note.created, note.text)


main()
