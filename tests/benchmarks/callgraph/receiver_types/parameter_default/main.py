class ConsoleLog:
    def write(self, text):
        print(text)


class NullLog:
    def write(self, text):
        return None


def deploy(version, log=ConsoleLog()):
    log.write(f"deploying {version}")
    return version


def main():
    deploy("1.0")


main()
