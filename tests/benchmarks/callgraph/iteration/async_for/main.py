import asyncio


class Ticker:
    def __init__(self, count):
        self.count = count

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.count == 0:
            raise StopAsyncIteration
        self.count -= 1
        await asyncio.sleep(0)
        return self.count


async def collect():
    return [n async for n in Ticker(3)]


def main():
    print(asyncio.run(collect()))


main()
