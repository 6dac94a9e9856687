import collections as col
from datetime import date


def word_counts(text):
    counts = col.Counter(text.split())
    return counts.most_common(2)


def first_day(year):
    return date(year, 1, 1).isoformat()


def main():
    print(word_counts("a b a c a b"), first_day(2024))


main()
