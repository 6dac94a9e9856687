import argparse
import json


class Cli(argparse.ArgumentParser):
    def __init__(self):
        super().__init__(prog="tool")
        self.add_argument("--name", default="world")


class Encoder(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, set):
            return sorted(o)
        return super().default(o)


def main():
    args = Cli().parse_args(["--name", "ada"])
    print(args.name, json.dumps({"tags": {"b", "a"}}, cls=Encoder))


main()
