from acme.session import expires_at


def test_expiry():
    assert expires_at(0) == 3600
