class Storage:
    def path(self):
        return "/data"

    def location(self):
        return self.path() + "/" + self.name()

    def name(self):
        return "storage"


class Local(Storage):
    def path(self):
        return "/local"


class Named(Storage):
    def name(self):
        return "named"


class LocalNamed(Local, Named):
    pass


def main():
    print(LocalNamed().location(), Named().location())


main()
