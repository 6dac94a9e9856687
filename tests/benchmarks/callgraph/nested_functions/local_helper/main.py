def summarize(numbers):
    def mean(values):
        return sum(values) / len(values)

    def spread(values):
        center = mean(values)
        return max(abs(v - center) for v in values)

    return mean(numbers), spread(numbers)


def main():
    print(summarize([1, 2, 3, 10]))


main()
