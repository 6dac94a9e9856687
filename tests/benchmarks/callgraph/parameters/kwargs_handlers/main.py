def dispatch(event, **handlers):
    handler = handlers[event]
    return handler()


def on_open():
    return "opened"


def on_close():
    return "closed"


def main():
    print(dispatch("open", open=on_open, close=on_close))
    print(dispatch("close", open=on_open, close=on_close))


main()
