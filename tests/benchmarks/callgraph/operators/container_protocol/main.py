class Settings:
    def __init__(self):
        self._data = {}

    def __getitem__(self, key):
        return self._data[normalize(key)]

    def __setitem__(self, key, value):
        self._data[normalize(key)] = value

    def __delitem__(self, key):
        del self._data[normalize(key)]

    def __contains__(self, key):
        return normalize(key) in self._data

    def __len__(self):
        return len(self._data)


def normalize(key):
    return key.lower()


def main():
    s = Settings()
    s["Debug"] = True
    print(s["DEBUG"], "debug" in s, len(s))
    del s["debug"]


main()
