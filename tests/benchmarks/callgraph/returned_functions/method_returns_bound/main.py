class Router:
    def route(self, path):
        if path == "/":
            return self.index
        return self.not_found

    def index(self):
        return "home"

    def not_found(self):
        return "404"


def serve(router, path):
    view = router.route(path)
    return view()


def main():
    router = Router()
    print(serve(router, "/"), serve(router, "/x"))


main()
