"""Shared test options and fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite the golden files of every stage from the current output (then review them)",
    )


@pytest.fixture
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Keep the declaration index cache of every test out of the user's cache folder."""
    monkeypatch.setenv("BRAINMIGRATE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
