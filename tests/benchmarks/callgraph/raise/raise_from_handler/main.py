class AppError(Exception):
    def describe(self):
        return f"app error: {self.args[0]}"


class ConfigError(AppError):
    def describe(self):
        return "config: " + super().describe()


def read(path):
    raise FileNotFoundError(path)


def load(path):
    try:
        return read(path)
    except FileNotFoundError as exc:
        raise ConfigError(path) from exc


def main():
    try:
        load("app.toml")
    except AppError as exc:
        print(exc.describe())


main()
