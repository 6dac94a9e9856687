import pytest


@pytest.fixture
def store():
    return {"ann": {"password": "pw"}}
