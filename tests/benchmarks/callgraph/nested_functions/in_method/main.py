class Report:
    def __init__(self, rows):
        self.rows = rows

    def format_row(self, row):
        return " | ".join(row)

    def render(self):
        def line(row):
            return self.format_row(row) + "\n"

        return "".join(line(row) for row in self.rows)


def main():
    print(Report([["a", "b"], ["c", "d"]]).render())


main()
