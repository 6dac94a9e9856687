"""Password logins."""

from acme.tokens import issue_token


class LoginService:
    """Checks passwords against a user store and issues session tokens."""

    def __init__(self, store):
        self.store = store

    def login(self, user, password):
        """Return a session token for a user whose password matches."""
        record = self.store.get(user)
        if record is None or record["password"] != password:
            raise PermissionError(user)
        return issue_token(user)


class AdminLoginService(LoginService):
    """Logins that must come from an administrator."""

    def login(self, user, password):
        """Return an admin token."""
        token = super().login(user, password)
        return "admin:" + token
