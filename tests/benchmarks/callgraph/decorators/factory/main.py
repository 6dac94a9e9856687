def retry(times):
    def decorate(fn):
        def wrapper(*args):
            last = None
            for _ in range(times):
                try:
                    return fn(*args)
                except ConnectionError as exc:
                    last = exc
            raise last
        return wrapper
    return decorate


ATTEMPTS = []


@retry(times=3)
def connect(host):
    ATTEMPTS.append(host)
    if len(ATTEMPTS) < 2:
        raise ConnectionError(host)
    return f"connected to {host}"


def main():
    print(connect("db"))


main()
