from app.api.views import index


def main():
    print(index())


main()
