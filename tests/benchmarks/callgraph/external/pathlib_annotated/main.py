import tempfile
from pathlib import Path


def write_note(folder: Path, text):
    note = folder / "note.txt"
    note.write_text(text)
    return note


def read_back(note: Path):
    return note.read_text()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        note = write_note(Path(tmp), "hello")
        print(read_back(note), note.exists())


main()
