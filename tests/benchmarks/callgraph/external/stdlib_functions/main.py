import json
import os.path
from os import path as osp


def config_path(root):
    return os.path.join(root, "config.json")


def backup_path(root):
    return osp.join(root, "config.json.bak")


def encode(settings):
    return json.dumps(settings, sort_keys=True)


def main():
    print(config_path("/etc"), backup_path("/etc"), json.loads(encode({"a": 1})))


main()
