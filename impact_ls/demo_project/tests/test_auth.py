import pytest

from acme.auth import AdminLoginService, LoginService


def test_login_returns_token(store):
    assert len(LoginService(store).login("ann", "pw")) == 16


def test_wrong_password_is_refused(store):
    with pytest.raises(PermissionError):
        LoginService(store).login("ann", "nope")


def test_admin_token(store):
    assert AdminLoginService(store).login("ann", "pw").startswith("admin:")
