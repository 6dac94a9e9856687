"""Client configuration: find our section in what an editor sends and validate it.

Editors send settings in different envelopes: VS Code and Neovim usually nest them under the
server's name (``{"impactLs": {...}}``), eglot and Helix often send the bare table. Keys are
camelCase on the wire (``maySeverity``); ``config.settings_from_mapping`` also accepts snake_case.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from impact_ls.config import Settings, settings_from_mapping

logger = logging.getLogger(__name__)

SECTION = "impactLs"
_ENVELOPES = (SECTION, "impact-ls", "impact_ls", "impact")


def client_section(value: Any) -> tuple[dict[str, Any], list[str]]:
    """Our settings inside ``value`` (an envelope or the bare table) and any warning."""
    if value is None:
        return {}, []
    if not isinstance(value, Mapping):
        return {}, [
            f"impact-ls settings must be an object, got {type(value).__name__}; using defaults"
        ]
    for key in _ENVELOPES:
        if key in value:
            inner = value[key]
            if inner is None:
                return {}, []
            if not isinstance(inner, Mapping):
                return {}, [f"settings {key!r} must be an object; using defaults"]
            return dict(inner), []
    return dict(value), []


def overrides_of(settings: Settings | None) -> dict[str, Any]:
    """The fields of ``settings`` that differ from the defaults, as a snake_case mapping."""
    if settings is None:
        return {}
    default = Settings()
    return {
        f.name: getattr(settings, f.name)
        for f in dataclasses.fields(Settings)
        if getattr(settings, f.name) != getattr(default, f.name)
    }


def validate(mapping: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Keep the keys that parse; one warning per bad key (its default stays)."""
    good: dict[str, Any] = {}
    warnings: list[str] = []
    for key, value in mapping.items():
        _, problems = settings_from_mapping({key: value})
        if problems:
            warnings.extend(problems)
        else:
            good[key] = value
    return good, warnings
