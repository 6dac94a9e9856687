import contextlib


@contextlib.contextmanager
def opened(path):
    handle = acquire(path)
    try:
        yield handle
    finally:
        release(handle)


def acquire(path):
    return {"path": path}


def release(handle):
    handle.clear()


def main():
    with opened("data.txt") as handle:
        print(handle["path"])


main()
