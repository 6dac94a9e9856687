class Order:
    def __init__(self, items):
        self.items = items

    def count(self):
        return len(self.items)
