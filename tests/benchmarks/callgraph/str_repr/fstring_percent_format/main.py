class User:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name.title()


def greet(user):
    a = f"hello {user}"
    b = "hi %s" % user
    c = "hey {}".format(user)
    return a, b, c


def main():
    print(greet(User("ada")))


main()
