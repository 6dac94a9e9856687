"""Plugin dispatch: actions are looked up by name at run time."""


def run_action(service, *args):
    """Run the service's login action by name."""
    return getattr(service, "login")(*args)
