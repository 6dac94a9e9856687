class Result:
    def __init__(self, errors):
        self.errors = errors

    def __bool__(self):
        return not self.errors


class Queue:
    def __init__(self):
        self.items = []

    def __len__(self):
        return len(self.items)


def main():
    ok = Result([])
    if ok:
        print("ok")
    if not Result(["bad"]):
        print("failed")
    queue = Queue()
    print("empty" if not queue else "busy", bool(ok))


main()
