import functools


class Document:
    def __init__(self, text):
        self.text = text

    @functools.cached_property
    def words(self):
        return tokenize(self.text)


def tokenize(text):
    return text.split()


def main():
    doc = Document("a b c")
    print(len(doc.words), doc.words[0])


main()
