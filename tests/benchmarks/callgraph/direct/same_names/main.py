class FileStore:
    def save(self, key, value):
        return self.path(key)

    def path(self, key):
        return f"/tmp/{key}"


class MemoryStore:
    def save(self, key, value):
        return key

    def path(self, key):
        return key


def save(key):
    store = FileStore()
    return store.save(key, 1)


def main():
    path = save("a")
    print(path)


main()
