"""impact_ls: a Python language server that shows the blast radius of the edit in progress."""

__version__ = "0.1.0"
