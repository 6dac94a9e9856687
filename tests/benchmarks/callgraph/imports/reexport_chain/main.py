from api import Client


class RetryingClient(Client):
    def get(self, path):
        return super().get(path) + " (retried)"


def main():
    print(RetryingClient("https://example").get("/"))


main()
