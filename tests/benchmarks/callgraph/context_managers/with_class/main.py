class Transaction:
    def __init__(self, name):
        self.name = name
        self.log = []

    def __enter__(self):
        self.log.append("begin")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.log.append("rollback" if exc_type else "commit")
        return False

    def execute(self, sql):
        self.log.append(sql)


def main():
    with Transaction("t1") as tx:
        tx.execute("insert")
    print(tx.log)


main()
