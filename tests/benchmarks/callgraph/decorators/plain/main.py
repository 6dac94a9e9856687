CALLS = []


def traced(fn):
    def wrapper(*args):
        CALLS.append(fn.__name__)
        return fn(*args)
    return wrapper


@traced
def double(x):
    return x * 2


@traced
def halve(x):
    return x / 2


def main():
    print(double(4), halve(4), CALLS)


main()
