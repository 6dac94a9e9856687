def multiply(a, b):
    return a * b


square = lambda x: multiply(x, x)


def main():
    cube = lambda x: multiply(square(x), x)
    print(square(3), cube(2))


main()
