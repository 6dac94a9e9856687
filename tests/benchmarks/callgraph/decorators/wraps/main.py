import functools
import time


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            record(fn.__name__, time.perf_counter() - start)
    return wrapper


def record(name, seconds):
    return name, seconds >= 0


def helper(n):
    return list(range(n))


@timed
def build(n):
    return helper(n)


def main():
    print(build(3), build.__name__)


main()
