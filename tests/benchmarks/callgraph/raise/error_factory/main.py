class HttpError(Exception):
    def __init__(self, status, reason):
        super().__init__(f"{status} {reason}")
        self.status = status


REASONS = {404: "Not Found", 500: "Server Error"}


def http_error(status):
    return HttpError(status, REASONS.get(status, "Unknown"))


def fetch(path):
    if path.startswith("/missing"):
        raise http_error(404)
    return "body"


def main():
    try:
        fetch("/missing/page")
    except HttpError as exc:
        print(exc.status, exc)


main()
