import functools


@functools.lru_cache(maxsize=None)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@functools.cache
def square(n):
    return n * n


def main():
    print(fib(20), square(4), square(4))


main()
