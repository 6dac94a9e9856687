def capitalize_words(text):
    return " ".join(word.capitalize() for word in split(text))


def split(text):
    return text.split()


def slug(text):
    return "-".join(split(text.lower()))
