import asyncio


class Session:
    def __init__(self, url):
        self.url = url
        self.open = False

    async def __aenter__(self):
        self.open = True
        return self

    async def __aexit__(self, exc_type, exc, tb):
        self.open = False

    async def get(self, path):
        await asyncio.sleep(0)
        return f"{self.url}{path}"


async def fetch():
    async with Session("http://example") as session:
        return await session.get("/status")


def main():
    print(asyncio.run(fetch()))


main()
