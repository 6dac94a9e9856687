HOOKS = []


def on_start(name):
    return f"start {name}"


def on_log(name):
    return f"log {name}"


def register(fn):
    HOOKS.append(fn)


def fire(name):
    return [hook(name) for hook in HOOKS]


def main():
    register(on_start)
    register(on_log)
    print(fire("job"))


main()
