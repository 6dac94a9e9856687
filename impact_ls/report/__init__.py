"""Rendering a Report as text, JSON or SARIF."""
