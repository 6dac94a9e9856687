"""Command-line entry point."""

from acme import LoginService


def main(store, argv):
    """Log in from the command line and return the token."""
    service = LoginService(store)
    return service.login(argv[0], argv[1])
