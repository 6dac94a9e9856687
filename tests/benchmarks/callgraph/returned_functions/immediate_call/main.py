def handler_for(kind):
    def handle_text(payload):
        return payload.upper()

    def handle_bytes(payload):
        return payload.decode()

    return handle_text if kind == "text" else handle_bytes


def main():
    print(handler_for("text")("abc"), handler_for("bytes")(b"xyz"))


main()
