PLUGINS = {}


def plugin(name):
    def register(cls):
        PLUGINS[name] = cls
        return cls
    return register


@plugin("upper")
class Upper:
    def apply(self, text):
        return text.upper()


@plugin("reverse")
class Reverse:
    def apply(self, text):
        return text[::-1]


def run(names, text):
    for name in names:
        text = PLUGINS[name]().apply(text)
    return text


def main():
    print(run(["upper", "reverse"], "abc"))


main()
