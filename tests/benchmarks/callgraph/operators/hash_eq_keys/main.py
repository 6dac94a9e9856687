class Coord:
    def __init__(self, row, col):
        self.row = row
        self.col = col

    def __hash__(self):
        return hash((self.row, self.col))

    def __eq__(self, other):
        return (self.row, self.col) == (other.row, other.col)


def main():
    seen = {Coord(0, 0)}
    board = {Coord(1, 1): "x"}
    print(Coord(0, 0) in seen, board[Coord(1, 1)])


main()
