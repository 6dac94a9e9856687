import functools


def logged(method):
    @functools.wraps(method)
    def wrapper(self, *args):
        self.log.append(method.__name__)
        return method(self, *args)
    return wrapper


class Account:
    def __init__(self):
        self.log = []
        self.balance = 0

    @logged
    def deposit(self, amount):
        self.balance += amount
        return self.check()

    @logged
    def withdraw(self, amount):
        self.balance -= amount
        return self.check()

    def check(self):
        return self.balance >= 0


def main():
    account = Account()
    account.deposit(10)
    account.withdraw(3)
    print(account.balance, account.log)


main()
