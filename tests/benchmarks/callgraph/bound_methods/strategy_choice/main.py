class Cache:
    def __init__(self, policy):
        if policy == "lru":
            self.evict = self._evict_oldest
        else:
            self.evict = self._evict_random
        self.items = {}

    def _evict_oldest(self):
        self.items.pop(next(iter(self.items)))

    def _evict_random(self):
        self.items.popitem()

    def put(self, key, value):
        if len(self.items) >= 2:
            self.evict()
        self.items[key] = value


def main():
    for policy in ("lru", "random"):
        cache = Cache(policy)
        for key in "abc":
            cache.put(key, 1)
        print(sorted(cache.items))


main()
