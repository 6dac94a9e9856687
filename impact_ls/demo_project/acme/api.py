"""HTTP handlers."""

from acme.auth import LoginService


def handle_login(store, request):
    """Log the request's user in and return the response body."""
    service = LoginService(store)
    token = service.login(request["user"], request["password"])
    return {"token": token}
