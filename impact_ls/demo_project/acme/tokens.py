"""Session tokens."""

import hashlib

SECRET = "demo-secret"


def issue_token(user):
    """Derive a token for a user."""
    return hashlib.sha256((SECRET + user).encode()).hexdigest()[:16]
