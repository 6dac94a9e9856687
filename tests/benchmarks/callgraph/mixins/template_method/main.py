import abc


class Exporter(abc.ABC):
    def export(self, rows):
        header = self.header()
        return [header] + [self.row(r) for r in rows]

    def header(self):
        return "rows"

    @abc.abstractmethod
    def row(self, row):
        raise NotImplementedError


class CsvExporter(Exporter):
    def row(self, row):
        return ",".join(row)


class TsvExporter(Exporter):
    def header(self):
        return "rows (tsv)"

    def row(self, row):
        return "\t".join(row)


def main():
    for exporter in (CsvExporter(), TsvExporter()):
        print(exporter.export([["a", "b"]]))


main()
