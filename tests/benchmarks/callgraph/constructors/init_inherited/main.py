class Animal:
    def __init__(self, name):
        self.name = name
        self.sound = self.default_sound()

    def default_sound(self):
        return "..."


class Dog(Animal):
    def default_sound(self):
        return "woof"


class Cat(Animal):
    def __init__(self, name, indoor):
        super().__init__(name)
        self.indoor = indoor


def main():
    print(Dog("rex").sound, Cat("tom", True).sound)


main()
