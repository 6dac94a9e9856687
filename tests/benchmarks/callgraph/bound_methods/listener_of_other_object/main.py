class Display:
    def show(self, value):
        print("value:", value)


class Sensor:
    def __init__(self, on_change):
        self.on_change = on_change

    def update(self, value):
        self.on_change(value)


def main():
    display = Display()
    sensor = Sensor(display.show)
    sensor.update(21)


main()
