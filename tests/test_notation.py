"""Line classes, decoding and the two classifiers (SPEC.md §Notation)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brainmigrate import notation
from brainmigrate.notation import parse_stamp, parse_stamp_lark, split_trailer

FAST = notation.classifier("fast")
LARK = notation.classifier("lark")

# The notation's alphabet: markers, bullets, whitespace of every kind, fences, comments.
ALPHABET = list("+!~=?>x-*@%#`~<>!P0123456789 \t\r\x0b\x0c[]()/.:aZ") + [
    "->",
    "<!--",
    "-->",
    "```",
    "~~~",
    "\u00a0",
    "\u2003",
    "\u2028",
    "\u0085",
    "\ufffd",
]
lines = st.lists(st.sampled_from(ALPHABET), max_size=12).map("".join)


@settings(max_examples=3000, deadline=None)
@given(lines)
def test_fast_and_lark_classifiers_agree(line):
    assert FAST(line) == LARK(line)


@pytest.mark.parametrize(
    "line, expected",
    [
        ("+ fact", ("fact", "+", 1)),
        ("-> handoff", ("fact", "->", 2)),
        ("- > bulleted action", ("fact", ">", 3)),
        ("!P3 flaky", ("fact", "!", 1)),
        ("x", ("fact", "x", 1)),
        ("xterm", ("prose", "", 0)),
        ("X done", ("prose", "", 0)),
        ("- [x] done", ("prose", "", 0)),
        ("@ctx", ("context", "@", 1)),
        ("* % state", ("state", "%", 3)),
        ("###### six", ("heading", "######", 6)),
        ("####### seven", ("prose", "", 0)),
        ("~~~~ yaml", ("fence", "~~~~", 4)),
        ("~ decision", ("fact", "~", 1)),
        ("<!-- c", ("comment", "<!--", 4)),
        ("\t  indented", ("indented", "\t  ", 3)),
        (" \u00a0\u2028", ("blank", "", 3)),
        ("", ("blank", "", 0)),
    ],
)
def test_classify(line, expected):
    assert FAST(line) == expected
    assert LARK(line) == expected


def scan_bytes(tmp_path: Path, data: bytes):
    f = tmp_path / "n.md"
    f.write_bytes(data)
    diags = []
    out = [
        (ln.number, ln.cls, ln.reason, ln.marker, ln.text) for ln in notation.scan(f, "n.md", diags)
    ]
    return out, diags


def test_lone_cr_and_unicode_separators_do_not_end_lines(tmp_path):
    out, _ = scan_bytes(tmp_path, "+ a\rb\u2028c\u2029d\x0ce\x0bf\u0085g\n".encode())
    assert out == [(1, "fact", "", "+", " a\rb\u2028c\u2029d\x0ce\x0bf\u0085g")]


def test_crlf_and_bom(tmp_path):
    out, diags = scan_bytes(tmp_path, b"\xef\xbb\xbf+ a\r\n\xef\xbb\xbf+ b\r\n")
    # only the BOM at byte 0 is dropped; a second one makes line 2 prose
    assert out == [(1, "fact", "", "+", " a"), (2, "skipped", "prose", "", "")]
    assert diags == []


def test_line_count_without_final_newline_and_empty_file(tmp_path):
    assert len(scan_bytes(tmp_path, b"+ a\n+ b")[0]) == 2
    assert len(scan_bytes(tmp_path, b"+ a\n")[0]) == 1
    assert scan_bytes(tmp_path, b"")[0] == []
    assert len(scan_bytes(tmp_path, b"\n\n")[0]) == 2


def test_invalid_utf8_is_replaced_and_warned_with_column(tmp_path):
    out, diags = scan_bytes(tmp_path, b"+ ab\xff\xfecd\n")
    assert out[0][4] == " ab\ufffd\ufffdcd"
    assert [(d.line, d.col, d.code) for d in diags] == [(1, 5, "BM305")]


def test_unclosed_comment_is_one_line_and_the_rest_is_read(tmp_path):
    out, diags = scan_bytes(tmp_path, b"<!-- a\n+ b\n<!-- c\n  d\n")
    assert [(n, c, r) for n, c, r, _, _ in out] == [
        (1, "skipped", "comment"),
        (2, "fact", ""),
        (3, "skipped", "comment"),
        (4, "skipped", "orphan"),
    ]
    assert [(d.line, d.code) for d in diags] == [(1, "BM304"), (3, "BM304")]


def test_unclosed_comment_rescans_once_not_per_line(tmp_path):
    # 2,000 unclosed openings: linear, each warned once, no line lost or doubled
    out, diags = scan_bytes(tmp_path, b"<!-- x\n" * 2000)
    assert [n for n, *_ in out] == list(range(1, 2001))
    assert len(diags) == 2000


def test_invalid_bytes_warned_once_after_a_rescan(tmp_path):
    _, diags = scan_bytes(tmp_path, b"<!-- open\n+ caf\xe9\n")
    assert sorted((d.line, d.code) for d in diags) == [(1, "BM304"), (2, "BM305")]


def test_closing_fence_needs_same_char_and_length(tmp_path):
    out, diags = scan_bytes(tmp_path, b"````\n```\n~~~~\n````  \n+ after\n")
    assert [r for _, _, r, _, _ in out] == ["code"] * 4 + [""]
    assert diags == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a <!-- c -->", ("a ", " c ")),
        ("a <!-- c -->  \t", ("a ", " c ")),
        ("a <!-- c --> b", ("a <!-- c --> b", None)),
        ("a <!-- c", ("a <!-- c", None)),
        ("a <!-- c ->", ("a <!-- c ->", None)),
        ("a <!-->", ("a <!-->", None)),
        ("a <!---->", ("a ", "")),
        ("a <!-- x --> <!-- y -->", ("a <!-- x --> ", " y ")),
        ("a <!-- x --> y -->", ("a <!-- x --> y -->", None)),
    ],
)
def test_split_trailer(text, expected):
    assert split_trailer(text) == expected


@pytest.mark.parametrize(
    "inside, expected",
    [
        ("2026-09-23 13:16:09 run", ("2026-09-23T13:16:09Z", "run")),
        (" 2026-09-23T13:16 ", ("2026-09-23T13:16:00Z", None)),
        ("2026-09-23 13:16Z r", ("2026-09-23T13:16:00Z", "r")),
        ("2026-09-23 00:30+01:00 r", ("2026-09-22T23:30:00Z", "r")),
        ("2026-09-23 23:30-0500 r", ("2026-09-24T04:30:00Z", "r")),
        ("2026-02-29 10:00 r", None),
        ("2026-09-23 24:00 r", None),
        ("2026-09-23 13:16 two words", None),
        ("2026-09-23", None),
        ("reviewed", None),
    ],
)
def test_stamps_both_ways(inside, expected):
    assert parse_stamp(inside) == expected
    assert parse_stamp_lark(inside) == expected


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(list("0123456789-:TZ+ ab")), max_size=30).map("".join))
def test_stamp_paths_agree(inside):
    assert parse_stamp(inside) == parse_stamp_lark(inside)


def test_overlong_line_is_read_up_to_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(notation, "MAX_LINE", 64)
    out, diags = scan_bytes(tmp_path, b"+ " + b"a" * 200 + b"\r\n+ next\n" + b"x" * 100)
    assert out == [
        (1, "fact", "", "+", " " + "a" * 62),
        (2, "fact", "", "+", " next"),
        (3, "skipped", "prose", "", ""),
    ]
    assert [(d.line, d.code, d.message) for d in diags] == [
        (1, "BM308", "line longer than 64 bytes: the 140 bytes after them were skipped"),
        (3, "BM308", "line longer than 64 bytes: the 36 bytes after them were skipped"),
    ]
