def default_fallback(key):
    return f"<{key}>"


class Button:
    def __init__(self, label):
        self.label = label
        self.on_click = lambda: self.clicked()

    def clicked(self):
        return f"{self.label} clicked"


def lookup(table, key, fallback=lambda k: default_fallback(k)):
    if key in table:
        return table[key]
    return fallback(key)


def main():
    print(Button("ok").on_click(), lookup({}, "x"))


main()
