class Temperature:
    def __init__(self, celsius):
        self.celsius = celsius

    @classmethod
    def from_fahrenheit(cls, value):
        return cls(cls.to_celsius(value))

    @staticmethod
    def to_celsius(value):
        return (value - 32) * 5 / 9

    def describe(self):
        return f"{self.rounded()} C"

    def rounded(self):
        return round(self.celsius, 1)


def main():
    t = Temperature.from_fahrenheit(212)
    print(t.describe())


main()
