import functools


def send(channel, message):
    return f"[{channel}] {message}"


def broadcast(messages):
    to_ops = functools.partial(send, "ops")
    return [to_ops(m) for m in messages]


def main():
    print(broadcast(["up", "down"]))


main()
