"""Fact building: kinds, text, trailers, task ids, SUPERSEDED, scope (SPEC.md §Notation)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brainmigrate.read import facts
from brainmigrate.read.facts import TaskIds, build_fact, cut, plus_kind_for, scope_for
from brainmigrate.read.lines import Line


def fact(*texts: str, marker: str = "+", tasks: TaskIds | None = None, plus: str = "environment"):
    lines = [Line(1, "fact", marker=marker, text=texts[0], col=2)]
    lines += [Line(i + 2, "continuation", text=t, col=1) for i, t in enumerate(texts[1:])]
    diags = []
    return build_fact("n.md", lines, "area:n", plus, tasks or TaskIds(), diags), diags


@pytest.mark.parametrize(
    "marker, kind",
    [
        ("!", "blocker"),
        ("~", "decision"),
        ("=", "environment"),
        ("?", "other"),
        (">", "other"),
        ("->", "other"),
        ("x", "other"),
        ("+", "pattern"),
    ],
)
def test_kind_of_each_marker(marker, kind):
    assert fact(" t", marker=marker, plus="pattern")[0].kind == kind


@pytest.mark.parametrize(
    "stem, kind",
    [
        ("patterns.md", "pattern"),
        ("pattern.md", "pattern"),
        ("api-patterns.md", "pattern"),
        ("db_pattern.md", "pattern"),
        ("API-Patterns.md", "pattern"),
        ("antipatterns.md", "environment"),
        ("patterns-old.md", "environment"),
        ("facts.md", "environment"),
    ],
)
def test_plus_kind_from_file_stem(stem, kind):
    assert plus_kind_for(f"notes/{stem}") == kind
    assert plus_kind_for(f"notes/{stem}", "decision") == "decision"


def test_scope():
    assert scope_for("brain/facts/Docker.md") == "area:docker"
    assert scope_for("brain/facts/Docker.md", "repo") == "repo"


def test_text_joins_continuations_and_trailers_come_off_every_line():
    f, diags = fact(" a  <!-- 2026-09-20 10:00 r1 -->", "   b <!-- note -->", "\tc")
    assert (f.text, f.created, f.run) == ("a b c", "2026-09-20T10:00:00Z", "r1")
    assert [(d.line, d.col, d.code) for d in diags] == [(2, 6, "BM301")]


def test_task_id_reads_continuations_but_not_trailers():
    f, _ = fact(" no id <!-- TER-9 -->", "  here TER-12 then TER-13")
    assert (f.task, f.tasks) == ("TER-12", frozenset({"TER-12", "TER-13"}))


@pytest.mark.parametrize(
    "text, ids",
    [
        ("TER-167 CL-86 INV-2231", ["TER-167", "CL-86", "INV-2231"]),
        ("SHA-256 UTF-8 ISO-8601 RFC-9110 CVE-2024 X86-64 P0-1 MD5-9 SHA3-512", []),
        ("(TER-1), [TER-2]: TER-3.", ["TER-1", "TER-2", "TER-3"]),
        ("xTER-1 TER-1x 9TER-1 _TER-1 TER-1_", ["TER-1"]),
        ("ter-5 Ter-5", []),
        ("A1-2 Z9Z-3", ["A1-2", "Z9Z-3"]),
        ("修复了LDG-6会计 补测试CL-86和 éTER-7ü", ["LDG-6", "CL-86", "TER-7"]),
        ("TER-1٣ TER-2²", ["TER-1", "TER-2"]),
    ],
)
def test_default_task_pattern(text, ids):
    assert TaskIds().all(text) == ids


def test_custom_task_pattern_replaces_the_default_without_deny_list():
    assert TaskIds(r"#\d+").all("see #12 and SHA-1 and TER-4") == ["#12"]
    assert TaskIds(r"[A-Z]+-\d+").all("SHA-256") == ["SHA-256"]
    with pytest.raises(re.error):
        TaskIds("(")


@pytest.mark.parametrize(
    "text, status",
    [
        ("SUPERSEDED by k3", "superseded"),
        ("old (SUPERSEDED)", "superseded"),
        ("SUPERSEDED_BY k12", "superseded"),
        ("superseded", "active"),
        ("Superseded", "active"),
        ("XSUPERSEDED", "active"),
        ("2SUPERSEDED", "active"),
        ("SUPERSEDED.", "superseded"),
        ("SUPERSEDED: moved to k4", "superseded"),
        ("see src/SUPERSEDED.py", "active"),
        ("see src/SUPERSEDED.py:3-4", "active"),
        ("see `src/SUPERSEDED.py`", "active"),
        ("see [it](src/SUPERSEDED.py)", "active"),
        ("see src\\SUPERSEDED.py", "active"),
        ("see SUPERSEDED.py", "active"),
        ("see SUPERSEDED_BY.md", "active"),
        ("see docs/SUPERSEDED", "active"),
        ("see SUPERSEDED/notes.md", "active"),
        ("src/SUPERSEDED.py is SUPERSEDED by k12", "superseded"),
    ],
)
def test_superseded(text, status):
    assert fact(" " + text)[0].status == status


def test_cut_at_word_boundary_reads_whole_text_for_rules():
    long = " ".join(["w"] * 1500) + " TER-7"
    f, diags = fact(" " + long)
    assert len(f.text) <= 2000 and f.text.endswith("w") and not f.text.endswith(" ")
    assert f.task == "TER-7" and f.full_text.endswith("TER-7")
    assert [d.code for d in diags] == ["BM302"]


def test_cut_says_where_the_first_dropped_word_was_written():
    """BM302's line and column are those of the first word the cut drops, in the file:
    through folded runs of spaces and tabs, on a continuation line."""
    first = " " + "  ".join(["abcd"] * 300)  # 300 words: 1,499 characters folded
    second = "\t" + " \t ".join(["efgh"] * 150) + " tail"
    f, diags = fact(first, second)
    assert f.text.endswith("efgh") and len(f.text) <= 2000
    (d,) = diags
    assert (d.code, d.line) == ("BM302", 2)
    kept_on_line_2 = f.text.count("efgh")  # words kept from the continuation
    dropped_at = second.index("efgh")
    for _ in range(kept_on_line_2):
        dropped_at = second.index("efgh", dropped_at + 1)
    assert d.col == 1 + dropped_at  # the continuation's text starts at column 1
    assert second[d.col - 1 :].startswith("efgh")
    one_word, diags = fact(" " + "x" * 2500)  # cut inside the word: at its 2001st letter
    assert (diags[0].line, diags[0].col) == (1, 2 + 1 + 2000)


def test_cut_one_long_word():
    assert cut("x" * 2500) == "x" * 2000
    assert cut("ab cd", 4) == "ab"
    assert cut("ab cd", 5) == "ab cd"


def test_without_segments_keeps_every_other_field():
    from dataclasses import fields

    f, _ = fact(" a TER-1 <!-- 2026-09-20 10:00 r1 --> <!-- brainmigrate: allow-gone -->")
    bare = f.without_segments()
    assert bare.segments == () and f.segments
    for fl in fields(f):
        if fl.name != "segments":
            assert getattr(bare, fl.name) == getattr(f, fl.name), fl.name


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="AZT9_0a-1 .é/", max_size=30))
def test_the_task_regex_matches_as_the_default_task_pattern(text):
    """``DEFAULT_TASK_REGEX`` (the look-behind after the first letter) finds exactly the
    matches of ``DEFAULT_TASK_PATTERN`` as written."""
    written = re.compile(facts.DEFAULT_TASK_PATTERN)
    assert [m.span() for m in facts.DEFAULT_TASK_REGEX.finditer(text)] == [
        m.span() for m in written.finditer(text)
    ]


@pytest.mark.parametrize(
    "text", ["TER-1", "aTER-1", "_TER-1", "9TER-1", "éTER-1", "A-1-B-2", "TER-1a", "-X-9 ZZ-0"]
)
def test_the_task_regex_keeps_each_edge(text):
    written = re.compile(facts.DEFAULT_TASK_PATTERN)
    assert [m.span() for m in facts.DEFAULT_TASK_REGEX.finditer(text)] == [
        m.span() for m in written.finditer(text)
    ]
