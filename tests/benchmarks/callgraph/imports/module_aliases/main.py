import tools.text as text
from tools import numbers


def main():
    print(text.shout("hi"), numbers.clamp(15, 0, 10))


main()
