class Handler:
    def handle(self, request):
        return [f"handled {request}"]


class LoggingMixin:
    def handle(self, request):
        return ["log"] + super().handle(request)


class AuthMixin:
    def handle(self, request):
        return ["auth"] + super().handle(request)


class ApiHandler(AuthMixin, LoggingMixin, Handler):
    pass


def main():
    print(ApiHandler().handle("/users"))


main()
