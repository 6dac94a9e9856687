class Repository:
    def save(self, item):
        return f"saved {item}"


class Mailer:
    def send(self, to, text):
        return f"{to}: {text}"


class Audit:
    def save(self, item):
        return f"audited {item}"


class SignupService:
    def __init__(self, mailer: Mailer):
        self.repo = Repository()
        self.mailer = mailer

    def signup(self, email):
        self.repo.save(email)
        return self.mailer.send(email, "welcome")


def main():
    service = SignupService(Mailer())
    print(service.signup("a@example.org"))


main()
