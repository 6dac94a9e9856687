from mathlib import *


def main():
    print(mean([1, 2, 3]), median([3, 1, 2]))


main()
