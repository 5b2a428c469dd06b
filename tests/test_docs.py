"""The README names every command, README.md or docs/*.md documents every option, the
README's set-up commands stay true, and no relative link of README.md or docs/*.md is dead."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from brainmigrate.cli import main

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = README + "".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md")))
COMMANDS = sorted(main.commands)


def test_every_command_has_help_and_a_readme_section():
    for name in COMMANDS:
        cmd = main.commands[name]
        assert cmd.help, name
        assert f"brainmigrate {name}" in README, f"README has no section for {name}"


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_is_documented(name):
    cmd = main.commands[name]
    for param in cmd.params:
        if not isinstance(param, click.Option):
            continue
        for opt in param.opts:
            if opt.startswith("--") and opt != "--help":
                assert re.search(rf"`{re.escape(opt)}[` ]", DOCS), f"{name} {opt} undocumented"


def test_first_screen_has_the_two_setup_commands():
    first = README.split("\n---\n")[0]
    commands = re.findall(r"```sh\n(.+?)\n```", first)
    assert len(commands) == 2
    assert "pip install ." in commands[0] and "brainmigrate import samples/" in commands[0]
    assert "pip install -e '.[test]'" in commands[1] and commands[1].endswith("pytest")


def test_ci_runs_the_readme_test_command():
    test_command = re.findall(r"```sh\n(.+?)\n```", README)[1]
    assert test_command in (REPO / ".ci" / "run").read_text()


def test_exit_codes_documented():
    for code in ("| 0 |", "| 1 |", "| 2 |"):
        assert code in README


def test_the_agent_notes_example_is_what_check_prints(monkeypatch):
    """docs/check.md's worked example on samples/roots/shelf (Markdown notes, folders,
    scripts, aliases, git-ignored files) is what ``check`` prints, line for line."""
    from click.testing import CliRunner

    text = (REPO / "docs/check.md").read_text(encoding="utf-8")
    block = text.split("$ brainmigrate check samples/roots/shelf --root samples/roots/shelf\n")
    expected = block[1].split("\n```", 1)[0].splitlines()
    monkeypatch.chdir(REPO)
    done = CliRunner().invoke(
        main, ["check", "samples/roots/shelf", "--root", "samples/roots/shelf", "--isolated"]
    )
    assert done.exit_code == 1
    assert done.output.splitlines() == expected


def slugs(text: str) -> set[str]:
    """The anchors a Markdown file has, as GitHub makes them: each heading outside code
    fences lower-cased, stripped of punctuation but ``-`` and ``_``, spaces made ``-``,
    a repeated one given ``-1``, ``-2`` …; and every ``<a id>``/``<a name>``."""
    found: set[str] = set(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", text))
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *#* *$", outside_fences(text), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(f"{slug}-{count}" if count else slug)
    return found


def outside_fences(text: str) -> str:
    """``text`` without its fenced code blocks."""
    return re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.M | re.S)


def outside_code(text: str) -> str:
    """``text`` without its fenced code blocks and inline code spans."""
    return re.sub(r"`[^`\n]*`", "", outside_fences(text))


def test_slugs_are_githubs():
    text = "# A `b` c\n## Fixing: `--fix`, `--diff`\n## A b c\n```\n# not a heading\n```\n"
    assert slugs(text) == {"a-b-c", "fixing---fix---diff", "a-b-c-1"}


MARKDOWN = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    """Every ``](#x)``, ``](file.md)`` and ``](file.md#x)`` link of README.md and docs/*.md
    leads to a file that exists and, with ``#x``, to a heading or ``<a id>`` of it."""
    text = outside_code(page.read_text(encoding="utf-8"))
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto: …
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target}: no such file"
        if anchor and linked.suffix == ".md":
            have = slugs(linked.read_text(encoding="utf-8"))
            assert anchor in have, f"{page.name}: {target}: no such heading"
