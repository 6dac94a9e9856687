class Client:
    def __init__(self, base):
        self.base = base

    def get(self, path):
        return self.base + path
