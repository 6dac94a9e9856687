class Draft:
    def publish(self):
        return Published()

    def edit(self):
        return "edited draft"


class Published:
    def edit(self):
        return "edited published"


def main():
    doc = Draft()
    print(doc.edit())
    doc = doc.publish()
    print(doc.edit())


main()
