def load():
    return {"a": 1}


def save(data):
    return len(data)


def audit(data):
    return sorted(data)


def notify(data):
    return list(data)


def main():
    reader, writer = load, save
    data = reader()
    writer(data)
    first, *others = (audit, notify)
    first(data)
    for hook in others:
        hook(data)


main()
