def make_greeter(greeting):
    def greet(name):
        return f"{greeting}, {decorate(name)}"
    return greet


def decorate(name):
    return name.title()


def main():
    hello = make_greeter("Hello")
    print(hello("ada"))


main()
