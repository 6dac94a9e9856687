"""acme: a tiny shop backend used by the impact-ls demo."""

from acme.auth import AdminLoginService, LoginService

__all__ = ["AdminLoginService", "LoginService"]
