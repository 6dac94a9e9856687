def json_loader(text):
    return {"json": text}


def ini_loader(text):
    return {"ini": text}


class Config:
    loader = staticmethod(json_loader)

    def __init__(self, data):
        self.data = data

    @classmethod
    def parse(cls, text):
        return cls(cls.loader(text))


class IniConfig(Config):
    loader = staticmethod(ini_loader)


def main():
    print(Config.parse("{}").data, IniConfig.parse("[a]").data)


main()
