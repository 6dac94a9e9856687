class Task:
    def __init__(self, name, priority):
        self.name = name
        self.priority = priority

    def rank(self):
        return -self.priority


def order(tasks):
    return [t.name for t in sorted(tasks, key=lambda t: t.rank())]


def main():
    print(order([Task("a", 1), Task("b", 5)]))


main()
