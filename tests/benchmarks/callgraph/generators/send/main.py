def running_average():
    total = 0.0
    count = 0
    average = None
    while True:
        value = yield average
        total, count = accumulate(total, count, value)
        average = total / count


def accumulate(total, count, value):
    return total + value, count + 1


def main():
    averager = running_average()
    next(averager)
    averager.send(10)
    print(averager.send(20))


main()
