class Store:
    def __init__(self):
        self.items = {}

    def put(self, key, value):
        self.items[key] = value
        return self

    def snapshot(self) -> "Snapshot":
        return Snapshot(dict(self.items))


class Snapshot:
    def __init__(self, items):
        self.items = items

    def keys(self):
        return sorted(self.items)


def open_store():
    return Store()


def main():
    store = open_store()
    store.put("a", 1).put("b", 2)
    print(store.snapshot().keys())


main()
