"""Wording shared by the text report and the editor lenses."""

import pytest

from impact_ls.report.wording import plural, short_entity


@pytest.mark.parametrize(
    ("count", "noun", "expected"),
    [
        (1, "batch", "1 batch"),
        (2, "batch", "2 batches"),
        (0, "site", "0 sites"),
        (1, "affected test", "1 affected test"),
        (3, "affected test", "3 affected tests"),
    ],
)
def test_plural(count, noun, expected):
    assert plural(count, noun) == expected


@pytest.mark.parametrize(
    ("entity", "expected"),
    [
        ("pkg.auth.LoginService.login", "LoginService.login"),
        ("pkg.api.handle_login", "handle_login"),
        ("pkg.auth.LoginService", "LoginService"),
        ("main", "main"),
    ],
)
def test_short_entity(entity, expected):
    assert short_entity(entity) == expected
