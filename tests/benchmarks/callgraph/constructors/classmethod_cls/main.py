class Event:
    def __init__(self, kind, payload):
        self.kind = kind
        self.payload = payload

    @classmethod
    def from_dict(cls, data):
        return cls(data["kind"], cls.clean(data["payload"]))

    @staticmethod
    def clean(payload):
        return payload.strip()


class Alert(Event):
    def __init__(self, kind, payload):
        super().__init__(kind, payload.upper())


def main():
    print(Event.from_dict({"kind": "a", "payload": " x "}).payload)
    print(Alert.from_dict({"kind": "b", "payload": " y "}).payload)


main()
