"""Session lifetime: changes here tend to go with changes to logins."""

SESSION_TTL = 3600


def expires_at(now):
    """When a session opened at ``now`` expires."""
    return now + SESSION_TTL
