class Cancelled(Exception):
    def __init__(self):
        super().__init__("cancelled")
        self.code = exit_code()


def exit_code():
    return 130


def work(cancel):
    if cancel:
        raise Cancelled
    return "done"


def main():
    try:
        work(True)
    except Cancelled as exc:
        print(exc.code)


main()
