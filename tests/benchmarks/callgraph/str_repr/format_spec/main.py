class Duration:
    def __init__(self, seconds):
        self.seconds = seconds

    def __format__(self, spec):
        if spec == "m":
            return f"{minutes(self.seconds)}m"
        return f"{self.seconds}s"


def minutes(seconds):
    return seconds // 60


def main():
    d = Duration(150)
    print(format(d, "m"), f"{d:s}")


main()
