from storage.local import save as save_local
from storage.remote import save as save_remote


def backup(data):
    from storage import checksum

    return save_local(data), save_remote(data), checksum.digest(data)


def main():
    print(backup("abc"))


main()
