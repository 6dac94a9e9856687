def compress_fast(data):
    return data[:4]


def compress_small(data):
    return data[:2]


def choose(level):
    if level > 5:
        return compress_small
    return compress_fast


def compress(data, level):
    codec = choose(level)
    return codec(data)


def main():
    print(compress("abcdefgh", 1), compress("abcdefgh", 9))


main()
