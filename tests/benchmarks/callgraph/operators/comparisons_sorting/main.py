class Version:
    def __init__(self, text):
        self.parts = tuple(int(p) for p in text.split("."))

    def __lt__(self, other):
        return self.parts < other.parts

    def __eq__(self, other):
        return self.parts == other.parts


def newest(versions):
    return sorted(versions)[-1]


def main():
    versions = [Version("1.2"), Version("1.10"), Version("1.3")]
    print(newest(versions).parts, Version("1.0") == Version("1.0"), versions[0] < versions[1])


main()
