class Email:
    def send(self, text):
        return f"email: {text}"


class Sms:
    def send(self, text):
        return f"sms: {text}"


def notify(channel: Email, text):
    return channel.send(text)


def main():
    print(notify(Email(), "hi"))


main()
