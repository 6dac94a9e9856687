class Bus:
    def __init__(self):
        self.subscribers = []

    def subscribe(self, callback):
        self.subscribers.append(callback)

    def publish(self, message):
        for callback in self.subscribers:
            callback(message)


class Logger:
    def record(self, message):
        print("log", message)


class Mailer:
    def send(self, message):
        print("mail", message)


def main():
    bus = Bus()
    bus.subscribe(Logger().record)
    bus.subscribe(Mailer().send)
    bus.publish("deployed")


main()
