class User:
    def __init__(self, name):
        self.name = name


class Group:
    def __init__(self, name):
        self.name = name


class Repository:
    model = None

    def create(self, name):
        return self.model(name)


class UserRepository(Repository):
    model = User


class GroupRepository(Repository):
    model = Group


def main():
    print(UserRepository().create("ada").name, GroupRepository().create("admins").name)


main()
