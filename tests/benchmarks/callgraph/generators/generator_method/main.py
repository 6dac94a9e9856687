class Table:
    def __init__(self, rows):
        self.rows = rows

    def formatted(self):
        for row in self.rows:
            yield self.format_row(row)

    def format_row(self, row):
        return ",".join(str(cell) for cell in row)


def main():
    table = Table([[1, 2], [3, 4]])
    print(list(table.formatted()))
    print([line.upper() for line in table.formatted()])


main()
