import logging
import re

log = logging.getLogger("app")
VERSION = re.compile(r"(\d+)\.(\d+)")


def parse_version(text):
    match = VERSION.search(text)
    if match is None:
        log.warning("no version in %s", text)
        return None
    return int(match.group(1)), int(match.group(2))


def main():
    print(parse_version("release 3.11"), parse_version("none"))


main()
