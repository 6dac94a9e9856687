def strip(text):
    return text.strip()


def lower(text):
    return text.lower()


def collapse(text):
    return " ".join(text.split())


PIPELINE = [strip, lower, collapse]


def clean(text):
    for step in PIPELINE:
        text = step(text)
    return text


def main():
    print(clean("  Hello   World "))


main()
