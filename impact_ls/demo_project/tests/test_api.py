from acme.api import handle_login


def test_handle_login(store):
    assert "token" in handle_login(store, {"user": "ann", "password": "pw"})
