def bold(fn):
    def wrap_bold(text):
        return "<b>" + fn(text) + "</b>"
    return wrap_bold


def italic(fn):
    def wrap_italic(text):
        return "<i>" + fn(text) + "</i>"
    return wrap_italic


@bold
@italic
def render(text):
    return escape(text)


def escape(text):
    return text.replace("<", "&lt;")


def main():
    print(render("a<b"))


main()
