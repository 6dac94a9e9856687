def area_circle(r):
    return 3.14159 * r * r


def area_square(side):
    return side * side


AREAS = {
    "circle": lambda size: area_circle(size),
    "square": lambda size: area_square(size),
}


def area(kind, size):
    return AREAS[kind](size)


def main():
    print(area("circle", 1), area("square", 2))


main()
