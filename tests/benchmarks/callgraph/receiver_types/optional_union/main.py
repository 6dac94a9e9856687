from typing import Optional


class Cache:
    def get(self, key):
        return None


class Memory:
    def read(self, key):
        return f"memory:{key}"


class Disk:
    def read(self, key):
        return f"disk:{key}"


def lookup(key, cache: Optional[Cache] = None):
    if cache is not None:
        cache.get(key)
    return key


def load(source: Memory | Disk, key):
    return source.read(key)


def main():
    print(lookup("a"), lookup("b", Cache()), load(Memory(), "x"), load(Disk(), "y"))


main()
