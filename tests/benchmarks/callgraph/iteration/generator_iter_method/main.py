class Playlist:
    def __init__(self, songs):
        self.songs = songs

    def __iter__(self):
        for song in self.songs:
            yield normalize(song)


def normalize(title):
    return title.strip().title()


def main():
    for song in Playlist([" intro ", "outro"]):
        print(song)


main()
