import textutil
from textutil import slug as make_slug


def title(text):
    return textutil.capitalize_words(text)


def main():
    print(title("hello world"), make_slug("Hello World"))


main()
