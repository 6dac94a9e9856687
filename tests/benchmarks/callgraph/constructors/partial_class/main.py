import functools


class Connection:
    def __init__(self, host, port, timeout):
        self.address = f"{host}:{port}"
        self.timeout = timeout

    def describe(self):
        return f"{self.address} ({self.timeout}s)"


def pool(hosts):
    make = functools.partial(Connection, port=5432, timeout=3)
    return [make(host) for host in hosts]


def main():
    for conn in pool(["a", "b"]):
        print(conn.describe())


main()
