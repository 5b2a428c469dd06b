"""Module path candidates by shape (SPEC.md §Anchors 4), with their module context."""

from __future__ import annotations

import pytest

from brainmigrate.model import Segment
from brainmigrate.read.modules import ModuleCandidate, module_candidates


def found(text, line=1, col=1):
    return list(module_candidates([Segment(line, col, text)]))


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "run python -m parsers.jobs.reindex nightly",
            [ModuleCandidate("parsers.jobs.reindex", None, 1, 15, True)],
        ),
        (
            "`from billing.models import Invoice`",
            [ModuleCandidate("billing.models", None, 1, 7, True)],
        ),
        ("import app.core.db as db", [ModuleCandidate("app.core.db", None, 1, 8, True)]),
        (
            "DJANGO_SETTINGS_MODULE=config.settings.test",
            [ModuleCandidate("config.settings.test", None, 1, 24, True)],
        ),
        (
            "export DJANGO_SETTINGS_MODULE='config.settings'",
            [ModuleCandidate("config.settings", None, 1, 32, True)],
        ),
        (
            "--settings=config.settings.local",
            [ModuleCandidate("config.settings.local", None, 1, 12, True)],
        ),
        ("--settings config.x", [ModuleCandidate("config.x", None, 1, 12, True)]),
        ("APP_MODULE: web.app", [ModuleCandidate("web.app", None, 1, 13, False)]),
        ("--port=app.x", [ModuleCandidate("app.x", None, 1, 8, False)]),
        (
            "billing.models.Invoice.total is cached",
            [ModuleCandidate("billing.models", None, 1, 1, False, "Invoice.total")],
        ),
        ("entry billing.jobs:main", [ModuleCandidate("billing.jobs", "main", 1, 7, False)]),
        ("at billing.jobs:12", [ModuleCandidate("billing.jobs", None, 1, 4, False)]),
        ("(app.state.db).", [ModuleCandidate("app.state.db", None, 1, 2, False)]),
        (
            "e.g. i.e.,",
            [ModuleCandidate("e.g", None, 1, 1, False), ModuleCandidate("i.e", None, 1, 6, False)],
        ),
        ("setup.py", [ModuleCandidate("setup.py", None, 1, 1, False)]),
    ],
)
def test_module_candidates(text, expected):
    assert found(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "1.2.3",
        "v1.2",
        "Foo.bar",
        "src/app.core",
        "app\\core.x",
        "a.b-c",
        "a.b::c",
        "a.",
        ".a.b",
        "a..b",
        "python -m pytest",
        "import os",
        "naïve.café",
    ],
)
def test_no_module_candidates(text):
    assert found(text) == []


def test_positions_follow_the_segment():
    assert found("x -m a.b", line=4, col=7) == [ModuleCandidate("a.b", None, 4, 12, True)]


def test_context_is_the_word_right_before():
    assert found("import x then a.b and from here c.d") == [
        ModuleCandidate("a.b", None, 1, 15, False),
        ModuleCandidate("c.d", None, 1, 33, False),
    ]
