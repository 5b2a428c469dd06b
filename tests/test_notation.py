"""Line classes, decoding and the two classifiers (SPEC.md §Notation)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brainmigrate.read import lines as line_reading
from brainmigrate.read import notation, references
from brainmigrate.read.lines import scan, scan_file
from brainmigrate.read.notation import parse_stamp, parse_stamp_lark, split_block_id, split_trailer

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
    "[!",
    "[!note]",
    "]",
    "^",
    "1.",
    "12)",
    "[ ]",
    "[x]",
    "[X]",
    "]:",
    "<<<<<<<",
    "=======",
    ">>>>>>>",
    "|||||||",
    '"',
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
        ("> [!warning] pool sizes", ("callout", "> [!warning]", 12)),
        ("- > [!NOTE]", ("callout", "> [!NOTE]", 11)),
        (">[!tip]- folded", ("callout", ">[!tip]", 7)),
        ("> [!] x", ("fact", ">", 1)),
        ("> [note] x", ("fact", ">", 1)),
        ("+ [!note] x", ("fact", "+", 1)),
        # ordered list items and task boxes before a marker, "@" or "%"
        ("1. ! flaky upload", ("fact", "!", 4)),
        ("123456789) ~ nine digits", ("fact", "~", 12)),
        ("1234567890. ~ ten digits", ("prose", "", 0)),
        ("1.5 GB", ("prose", "", 0)),
        ("- [ ] ~ decide the pool size", ("fact", "~", 7)),
        ("- [x] x shipped", ("fact", "x", 7)),
        ("* [X] !P3 flaky", ("fact", "!", 7)),
        ("[ ] + boxed, no bullet", ("fact", "+", 5)),
        ("2. [x] -> handoff", ("fact", "->", 9)),
        ("- [x] done", ("prose", "", 0)),
        ("- [] ~ no box", ("prose", "", 0)),
        ("- [ ]~ glued", ("prose", "", 0)),
        ("3. @ context", ("context", "@", 4)),
        ("- [ ] % state", ("state", "%", 7)),
        # merge conflicts (whether one is open is scan's business)
        ("<<<<<<< HEAD", ("conflict_open", "<<<<<<<", 7)),
        ("<<<<<<<", ("conflict_open", "<<<<<<<", 7)),
        ("<<<<<<<< eight", ("prose", "", 0)),
        ("||||||| merged common ancestors", ("conflict_base", "|||||||", 7)),
        ("=======", ("conflict_sep", "=======", 7)),
        ("======= x", ("prose", "", 0)),
        (">>>>>>> feature/x", ("conflict_close", ">>>>>>>", 7)),
        # link reference definitions
        (
            "[adr-4]: docs/adr/0004-cache.md",
            ("link_definition", "[adr-4]: docs/adr/0004-cache.md", 31),
        ),
        (
            '   [A b]: <docs/My File.md> "title"',
            ("link_definition", '   [A b]: <docs/My File.md> "title"', 35),
        ),
        ("[x]: y 'z'", ("link_definition", "[x]: y 'z'", 10)),
        ("[x]: y (z)", ("link_definition", "[x]: y (z)", 10)),
        ("[x]:y", ("link_definition", "[x]:y", 5)),
        ("[x]: y z", ("prose", "", 0)),
        ("[x]:", ("prose", "", 0)),
        ("[ ]: y", ("prose", "", 0)),
        ("[^1]: a footnote", ("prose", "", 0)),
        ("    [x]: four spaces", ("indented", "    ", 4)),
        ("- [x]: y", ("prose", "", 0)),
    ],
)
def test_classify(line, expected):
    assert FAST(line) == expected
    assert LARK(line) == expected


def scan_bytes(tmp_path: Path, data: bytes):
    f = tmp_path / "n.md"
    f.write_bytes(data)
    diags = []
    out = [(ln.number, ln.cls, ln.reason, ln.marker, ln.text) for ln in scan(f, "n.md", diags)]
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
    monkeypatch.setattr(line_reading, "MAX_LINE", 64)
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


def scan_handle(data: bytes):
    diags = []
    out = [
        (ln.number, ln.cls, ln.reason, ln.marker, ln.text, ln.col)
        for ln in scan_file(io.BytesIO(data), "n.md", diags)
    ]
    return out, [(d.line, d.col, d.code, d.severity, d.message) for d in diags]


NOTES = "+ 配置 a\r\n  more\r\n\r\n> act\u2028ion\r\n"
NOTES_LINES = [
    (1, "fact", "", "+", " 配置 a", 2),
    (2, "continuation", "", "", "  more", 1),
    (3, "blank", "", "", "", 1),
    (4, "fact", "", ">", " act\u2028ion", 2),
]


@pytest.mark.parametrize(
    "bom, codec, name",
    [
        (b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32 LE"),
        (b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32 BE"),
        (b"\xff\xfe", "utf-16-le", "UTF-16 LE"),
        (b"\xfe\xff", "utf-16-be", "UTF-16 BE"),
    ],
)
def test_utf16_and_utf32_with_a_bom_are_decoded(bom, codec, name):
    out, diags = scan_handle(bom + NOTES.encode(codec))
    assert out == NOTES_LINES
    assert diags == [(None, None, "BM310", "info", f"decoded as {name} (byte order mark)")]


def test_utf32_le_bom_is_checked_before_utf16_le():
    # FF FE 00 00 is also UTF-16 LE's mark followed by U+0000: UTF-32 wins (SPEC.md)
    out, diags = scan_handle(b"\xff\xfe\x00\x00" + "+ a\n".encode("utf-32-le"))
    assert out == [(1, "fact", "", "+", " a", 2)]
    assert [d[2] for d in diags] == ["BM310"]


def test_only_one_bom_is_dropped_from_utf16():
    out, _ = scan_handle("\ufeff\ufeff+ a\n".encode("utf-16"))
    assert out == [(1, "skipped", "prose", "", "", 1)]


def test_utf16_invalid_sequences_become_one_replacement_each_with_a_warning():
    lone = "+ a\n+ b\ud800c\n+ d\udc00\x00e\n".encode("utf-16-le", "surrogatepass")
    out, diags = scan_handle(b"\xff\xfe" + lone + b"x")  # an odd last byte
    assert out == [
        (1, "fact", "", "+", " a", 2),
        (2, "fact", "", "+", " b\ufffdc", 2),
        (3, "fact", "", "+", " d\ufffd\ufffde", 2),
        (4, "skipped", "prose", "", "", 1),
    ]
    assert diags == [
        (None, None, "BM310", "info", "decoded as UTF-16 LE (byte order mark)"),
        (2, 4, "BM305", "warning", "invalid UTF-16 LE bytes replaced with U+FFFD"),
        (3, 4, "BM305", "warning", "invalid UTF-16 LE bytes replaced with U+FFFD"),
        (3, 5, "BM306", "warning", "NUL bytes replaced with U+FFFD"),
        (4, 1, "BM305", "warning", "invalid UTF-16 LE bytes replaced with U+FFFD"),
    ]


def test_utf16_without_a_bom_is_read_as_utf8_and_the_warning_says_what_it_looks_like():
    out, diags = scan_handle("+ see docs/a.md\n+ and b\n".encode("utf-16-le"))
    assert [o[1] for o in out] == ["skipped", "skipped", "skipped"]  # as SPEC reads it
    hint = (
        "NUL bytes replaced with U+FFFD; every other byte is NUL, as in UTF-16 without a"
        " byte order mark: save the file as UTF-8 (or UTF-16 with a BOM)"
    )
    assert diags == [
        (1, 2, "BM306", "warning", hint),
        (2, 1, "BM306", "warning", hint),
        (3, 1, "BM306", "warning", "NUL bytes replaced with U+FFFD"),  # the last NUL alone
    ]


def test_utf32_code_point_out_of_range_is_replaced():
    data = b"\x00\x00\xfe\xff" + "+ a".encode("utf-32-be") + b"\x00\x11\x00\x00" + b"\x00\x00\x00\n"
    out, diags = scan_handle(data)
    assert out == [(1, "fact", "", "+", " a\ufffd", 2)]
    assert [(d[0], d[1], d[2]) for d in diags] == [(None, None, "BM310"), (1, 4, "BM305")]


def test_utf16_file_with_an_unclosed_comment_rescans_the_transcoded_text(tmp_path):
    data = b"\xff\xfe" + "<!-- open\n+ caf\ud800\n  é\n".encode("utf-16-le", "surrogatepass")
    out, diags = scan_bytes(tmp_path, data)
    assert out == [
        (1, "skipped", "comment", "", ""),
        (2, "fact", "", "+", " caf\ufffd"),
        (3, "continuation", "", "", "  é"),
    ]
    # line 2's bytes are warned once, on the look-ahead that finds the comment unclosed
    assert [(d.line, d.code) for d in diags] == [(None, "BM310"), (2, "BM305"), (1, "BM304")]


def test_utf16_is_transcoded_in_chunks(monkeypatch):
    monkeypatch.setattr(line_reading, "CHUNK", 3)  # splits code units and surrogate pairs
    text = "+ 😀 a\ud800\n+ 🐍\n"
    out, diags = scan_handle(b"\xfe\xff" + text.encode("utf-16-be", "surrogatepass"))
    assert out == [(1, "fact", "", "+", " 😀 a\ufffd", 2), (2, "fact", "", "+", " 🐍", 2)]
    assert [(d[0], d[1], d[2]) for d in diags] == [(None, None, "BM310"), (1, 6, "BM305")]


def test_utf16_temporary_file_honours_tmpdir(tmp_path, monkeypatch):
    from brainmigrate import spill

    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    with pytest.raises(spill.SpillError, match="missing"):
        scan_handle(b"\xff\xfe" + "+ a\n".encode("utf-16-le"))
    # UTF-8 needs no temporary file
    assert scan_handle(b"+ a\n")[0] == [(1, "fact", "", "+", " a", 2)]


def test_scan_reads_a_utf16_file_by_path(tmp_path):
    out, diags = scan_bytes(tmp_path, "+ a\r\n".encode("utf-16"))
    assert out == [(1, "fact", "", "+", " a")]
    assert [d.code for d in diags] == ["BM310"]


def test_callout_and_the_quote_lines_after_it_are_skipped():
    notes = (
        "> [!note] pool sizes\n"
        "> more\n"
        ">\n"
        ">> nested\n"
        "  indented\n"
        "> [!tip]- another\n"
        "\n"
        "> action\n"
        "> [!warning]\n"
        "+ fact\n"
        "> after a fact\n"
        "- > [!NOTE] bulleted\n"
        ">still quoted\n"
    )
    out, diags = scan_handle(notes.encode())
    assert [(n, c, r, m) for n, c, r, m, _, _ in out] == [
        (1, "skipped", "callout", ""),
        (2, "skipped", "callout", ""),
        (3, "skipped", "callout", ""),
        (4, "skipped", "callout", ""),
        (5, "skipped", "callout", ""),
        (6, "skipped", "callout", ""),
        (7, "blank", "", ""),
        (8, "fact", "", ">"),
        (9, "skipped", "callout", ""),
        (10, "fact", "", "+"),
        (11, "fact", "", ">"),
        (12, "skipped", "callout", ""),
        (13, "skipped", "callout", ""),
    ]
    assert diags == []


def test_callout_lines_agree_with_lark():
    notes = b"> [!note] a\n> b\n\n> c\n"
    lark = [(ln.number, ln.cls, ln.reason) for ln in scan_file(io.BytesIO(notes), "n.md", [], LARK)]
    assert lark == [(n, c, r) for n, c, r, *_ in scan_handle(notes)[0]]


@pytest.mark.parametrize(
    "text, expected",
    [
        (" fact text ^abc-1", " fact text "),
        (" fact text ^abc-1 \t", " fact text "),
        (" keep ^123", " keep ^123"),
        (" keep ^12-3", " keep ^12-3"),
        (" ^abc", " ^abc"),
        ("\t^x", "\t^x"),
        (" a^b", " a^b"),
        (" a ^b c", " a ^b c"),
        (" a ^b_c", " a ^b_c"),
        (" a ^é", " a ^é"),
        (" a ^", " a ^"),
        (" a ^x ^y", " a "),
        (" ^x ^y", " ^x "),
        ("^abc", "^abc"),
        (" 2^10 ^z9", " 2^10 "),
    ],
)
def test_split_block_id(text, expected):
    assert split_block_id(text) == expected


def test_a_block_id_alone_is_the_fact_text_not_an_id():
    # '^abc' after the marker trails no text: it is the text, so an export of any fact
    # reads back the same ('+ ^blk ^blk' is stored as '^blk', written and read as '^blk').
    out, _ = scan_handle(b"+ ^abc\n  ^x1\n+ ^abc <!-- 2026-09-23 13:16 r -->\n+ ^123\n")
    assert [(n, c, r) for n, c, r, *_ in out] == [
        (1, "fact", ""),
        (2, "continuation", ""),
        (3, "fact", ""),
        (4, "fact", ""),
    ]
    facts, _ = facts_of(b"+ ^abc\n  ^x1\n+ ^blk ^blk\n")
    assert [f.text for f in facts] == ["^abc", "^blk"]


def facts_of(data: bytes) -> tuple[list, list]:
    from brainmigrate.read.facts import TaskIds, build_fact

    diags: list = []
    facts, pending = [], []
    for ln in scan_file(io.BytesIO(data), "n.md", diags):
        if ln.cls == "continuation" and pending:
            pending.append(ln)
            continue
        if pending:
            facts.append(build_fact("n.md", pending, "area:n", "environment", TaskIds(), diags))
            pending = []
        if ln.cls == "fact":
            pending.append(ln)
    if pending:
        facts.append(build_fact("n.md", pending, "area:n", "environment", TaskIds(), diags))
    return facts, diags


def test_block_ids_are_removed_from_every_line_of_a_fact_without_a_warning():
    facts, diags = facts_of(
        b"+ fact text ^abc-1\n"
        b"+ keep ^123\n"
        b"+ dated ^x1 <!-- 2026-09-23 13:16 nightly -->\n"
        b"+ first ^a\n  second ^b-2\n  ^c\n"
        b"+ after <!-- note --> ^d\n"
        b"+ task ^LDG-6 is an id, not a task\n"
        b"+ task ^LDG-6\n"
    )
    assert [(f.line, f.text, f.created, f.run, f.task) for f in facts] == [
        (1, "fact text", None, None, None),
        (2, "keep ^123", None, None, None),
        (3, "dated", "2026-09-23T13:16:00Z", "nightly", None),
        (4, "first second", None, None, None),
        # the trailer is split off first: a comment before the block id stays in the text
        (7, "after <!-- note -->", None, None, None),
        (8, "task ^LDG-6 is an id, not a task", None, None, "LDG-6"),
        (9, "task", None, None, None),
    ]
    assert [s.text for s in facts[3].segments] == [" first ", "  second ", "  "]
    assert diags == []


def _terminal_class(name: str) -> str:
    """The regular expression a one-character terminal of notation.lark is defined as."""
    for line in notation.grammar_text().splitlines():
        if line.startswith(f"{name}: /"):
            return line.split(": /", 1)[1].rsplit("/", 1)[0]
    raise AssertionError(f"notation.lark defines no {name}")


def test_ws_chars_is_the_grammars_whitespace_terminal():
    """``notation.WS_CHARS`` (folding, stripping) and the grammar's ``WS`` are one class,
    and BLANK, built from ``WS``, is a run of exactly those characters."""
    import re

    # the same class as written (the grammar spells its characters as escapes)
    assert _terminal_class("WS").encode().decode("unicode_escape") == f"[{notation.WS_CHARS}]"
    blank = re.compile(notation.terminals()["BLANK"])
    ws = re.compile(f"[{notation.WS_CHARS}]")
    for c in map(chr, range(0x110000)):
        assert (
            bool(blank.fullmatch(c))
            == bool(ws.fullmatch(c))
            == (c.isspace() and c not in "\n\x1c\x1d\x1e\x1f")
        ), hex(ord(c))


def test_the_separator_terminal_is_what_bullets_and_stamps_are_built_from():
    import re
    import unicodedata

    sep = _terminal_class("SEP")
    t = notation.terminals()
    for c in map(chr, range(0x110000)):
        is_sep = c == "\t" or unicodedata.category(c) == "Zs"
        assert bool(re.fullmatch(sep, c)) == is_sep, hex(ord(c))
        assert bool(re.fullmatch(t["BULLET"], f"-{c}")) == is_sep
        assert bool(re.fullmatch(t["RUN_SEP"], c)) == is_sep
        assert bool(re.fullmatch(t["DATE_SEP"], c)) == (is_sep or c == "T")


# every code point, surrogates too, in one string: a class's matches are read in one pass
EVERY_CHARACTER = "".join(map(chr, range(0x110000)))


def test_fast_classes_match_the_characters_the_grammars_classes_match():
    """Each fast form (``\\s`` based, compiled fast) matches exactly the characters of the
    class the grammar spells, on every code point."""
    import re

    pairs = [
        (f"[{notation.WS_CHARS}]", notation.WS_CLASS),
        (f"[{notation.WS_CHARS}\n]", notation.WS_NL_CLASS),
        (f"[^{notation.WS_CHARS}\n]", notation.NOT_WS_NL_CLASS),
        (f"[{notation.SEP_CHARS}]", notation.SEP_CLASS),
        *notation._FAST_CLASSES.items(),
    ]
    for slow, fast in pairs:
        assert re.findall(slow, EVERY_CHARACTER) == re.findall(fast, EVERY_CHARACTER), slow
    assert _terminal_class("SEP").encode().decode("unicode_escape") == f"[{notation.SEP_CHARS}]"
    # every class the terminals spell is replaced: none is left to compile slowly
    t = notation.terminals()
    for name in ("BLANK", "HEADING", "BULLET", "PRIORITY", "CALLOUT", "MARKER", "RUN"):
        assert notation.fast_classes(t[name]) != t[name], name


def test_fast_classes_leave_the_classifier_and_the_stamp_as_composed():
    """The classifier's and the stamp's expressions, with and without ``fast_classes``,
    match alike on lines made of every whitespace character and its neighbours."""
    import re

    odd = [c for c in EVERY_CHARACTER if c.isspace()] + ["\x1c", "\x1f", "a", "T", "\x00"]
    shapes = [
        "{c}",
        "{c}{c}",
        "-{c}x",
        "*{c}{c}!P1{c}a",
        "-{c}>{c}[!x] y",
        ">{c}[!note]",
        "+{c}t",
        "->{c}t",
        "x{c}",
        "#{c}h",
        "!P1{c}",
        "{c}@ ctx",
        "```{c}",
    ]
    stamps = ["2026-01-01{c}10:00", "2026-01-01 10:00:00Z{c}run-1", "2026-01-01T10:00{c}r{c}"]
    pairs = [
        (notation.classifier_source(), shapes),
        (notation.stamp_source(), stamps),
    ]
    for source, forms in pairs:
        slow, fast = re.compile(source), re.compile(notation.fast_classes(source))
        assert slow.pattern != fast.pattern
        for c in odd:
            for form in forms:
                line = form.format(c=c)
                a, b = slow.match(line), fast.match(line)
                assert (a and (a.span(), a.lastgroup, a.groupdict())) == (
                    b and (b.span(), b.lastgroup, b.groupdict())
                ), repr(line)


def lines_of(data: bytes, classify=FAST) -> tuple[list, list]:
    diags: list = []
    out = [
        (ln.number, ln.cls, ln.reason, ln.marker, ln.text)
        for ln in scan_file(io.BytesIO(data), "n.md", diags, classify)
    ]
    return out, diags


CONFLICT = (
    b"+ before\n"
    b"<<<<<<< HEAD\n"
    b"+ pool of 8\n"
    b"  continued\n"
    b"=======\n"
    b"+ pool of 16\n"
    b">>>>>>> feature/pool\n"
    b"  orphan after the close\n"
)


@pytest.mark.parametrize("classify", [FAST, LARK], ids=["fast", "lark"])
def test_a_merge_conflict_skips_its_marker_lines_and_reads_both_sides(classify):
    out, diags = lines_of(CONFLICT, classify)
    assert out == [
        (1, "fact", "", "+", " before"),
        (2, "skipped", "conflict", "", ""),
        (3, "fact", "", "+", " pool of 8"),
        (4, "continuation", "", "", "  continued"),
        (5, "skipped", "conflict", "", ""),
        (6, "fact", "", "+", " pool of 16"),
        (7, "skipped", "conflict", "", ""),
        (8, "skipped", "orphan", "", ""),
    ]
    assert [d.to_dict() for d in diags] == [
        {
            "file": "n.md",
            "line": 2,
            "code": "BM311",
            "severity": "warning",
            "message": "unresolved merge conflict (lines 2-7); resolve it",
            "col": None,
        }
    ]


def test_the_merge_base_of_a_diff3_conflict_is_skipped():
    out, diags = lines_of(
        b"<<<<<<< ours\n"
        b"~ pool of 8\n"
        b"||||||| base\n"
        b"~ pool of 4\n"
        b"```\n"
        b"\n"
        b"=======\n"
        b"~ pool of 16\n"
        b">>>>>>> theirs\n"
        b"```\n"
        b"+ in the fence\n"
    )
    assert out == [
        (1, "skipped", "conflict", "", ""),
        (2, "fact", "", "~", " pool of 8"),
        (3, "skipped", "conflict", "", ""),
        (4, "skipped", "conflict", "", ""),
        (5, "skipped", "conflict", "", ""),
        (6, "skipped", "conflict", "", ""),
        (7, "skipped", "conflict", "", ""),
        (8, "fact", "", "~", " pool of 16"),
        (9, "skipped", "conflict", "", ""),
        (10, "skipped", "code", "", ""),
        (11, "skipped", "code", "", ""),
    ]
    assert [(d.line, d.code, d.message) for d in diags] == [
        (1, "BM311", "unresolved merge conflict (lines 1-9); resolve it"),
        (10, "BM303", "code fence never closed"),
    ]


def test_an_unclosed_conflict_runs_to_the_end_of_the_file_and_says_so():
    out, diags = lines_of(b"+ a\n<<<<<<< HEAD\n+ b\n=======\n+ c\n")
    assert [(n, c, r) for n, c, r, _, _ in out] == [
        (1, "fact", ""),
        (2, "skipped", "conflict"),
        (3, "fact", ""),
        (4, "skipped", "conflict"),
        (5, "fact", ""),
    ]
    assert [(d.line, d.code, d.severity, d.message) for d in diags] == [
        (
            2,
            "BM311",
            "warning",
            "unresolved merge conflict (lines 2-5, never closed); resolve it",
        )
    ]


def test_conflict_markers_with_no_conflict_open_are_prose():
    out, diags = lines_of(b"Title\n=======\n>>>>>>> x\n||||||| y\n+ fact\n")
    assert [(n, c, r) for n, c, r, _, _ in out] == [
        (1, "skipped", "prose"),
        (2, "skipped", "prose"),
        (3, "skipped", "prose"),
        (4, "skipped", "prose"),
        (5, "fact", ""),
    ]
    assert diags == []


def test_nested_conflicts_are_one_warning_each():
    _, diags = lines_of(b"<<<<<<< a\n<<<<<<< b\n=======\n>>>>>>> b\n=======\n>>>>>>> a\n")
    assert sorted((d.line, d.message) for d in diags) == [
        (1, "unresolved merge conflict (lines 1-6); resolve it"),
        (2, "unresolved merge conflict (lines 2-4); resolve it"),
    ]


def test_a_link_definition_is_skipped_and_keeps_its_text():
    out, diags = lines_of(b"+ see [the ADR][adr-4]\n[adr-4]: docs/adr/0004-cache.md\n  [b]: x\n")
    assert out == [
        (1, "fact", "", "+", " see [the ADR][adr-4]"),
        (2, "skipped", "link-definition", "", "[adr-4]: docs/adr/0004-cache.md"),
        (3, "skipped", "link-definition", "", "  [b]: x"),
    ]
    assert diags == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[adr-4]: docs/adr/0004-cache.md", ("adr-4", "docs/adr/0004-cache.md")),
        ('[ADR  4]: <docs/My File.md> "the title"', ("adr 4", "docs/My File.md")),
        ("   [Run\tBook]:runbooks/cold.md (title)", ("run book", "runbooks/cold.md")),
        ("[a\\]b]: <>", ("a\\]b", "")),
        ("[Straße]: x.md", ("strasse", "x.md")),
        ("no definition", None),
    ],
)
def test_link_definition_parts(text, expected):
    assert references.link_definition(text) == expected


def test_link_label_folds_case_and_whitespace():
    assert notation.link_label("  ADR\u2003\t 4 ") == "adr 4"
    assert notation.link_label("Foo Bar") == notation.link_label("foo   BAR")


@settings(max_examples=2000, deadline=None)
@given(lines)
def test_every_line_the_grammar_calls_a_link_definition_has_parts(line):
    if FAST(line)[0] == "link_definition":
        assert references.link_definition(line) is not None


@pytest.mark.parametrize(
    "text, task",
    [
        ("+ PSR-18 client", None),
        ("+ EIP-1559 fees", None),
        ("+ SEV-1 outage", None),
        ("+ SEV1-2 outage", None),
        ("+ ERC-20, BIP-32, JEP-400, JSR-310, KEP-753, KIP-500, SOC-2", None),
        ("+ FIPS-140, NIST-800, WCAG-21, OWASP-10, IEC-62304", None),
        ("+ SEV-1 outage TER-167", "TER-167"),
        ("+ TER-167 fixed", "TER-167"),
        ("+ PSRX-1 is a ticket prefix", "PSRX-1"),
    ],
)
def test_standards_and_grades_are_no_task_ids(text, task):
    facts, _ = facts_of(text.encode())
    assert facts[0].task == task


def test_a_fact_after_an_ordered_item_or_a_task_box():
    facts, _ = facts_of(
        b"1. ! flaky upload\n- [ ] ~ decide the pool size\n- [x] x shipped\n- [x] done\n"
    )
    assert [(f.line, f.marker, f.kind, f.text) for f in facts] == [
        (1, "!", "blocker", "flaky upload"),
        (2, "~", "decision", "decide the pool size"),
        (3, "x", "other", "shipped"),
    ]


#: Bytes that make a block leave the one-pass read: CR, NUL, invalid and multi-byte UTF-8,
#: a BOM, and the newline that ends a line.
_LINE_BYTES = [b"a", b"B", b" ", b"\n", b"\r", b"\r\n", b"\x00", b"\xff", b"\xc3\xa9", b"\xe2\x80"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_LINE_BYTES), max_size=40).map(b"".join),
    st.sampled_from([1, 2, 3, 5, 8, 64]),
    st.booleans(),
    st.sampled_from([0, 2]),
)
def test_lines_read_by_blocks_are_the_lines_read_one_by_one(data, block, bom, warn_after):
    """``read_lines`` (a block at a time) gives the lines, offsets and diagnostics of
    reading a ``readline`` a line, whatever the block size, from any offset."""
    data = (line_reading.BOM if bom else b"") + data
    was = line_reading.BLOCK
    line_reading.BLOCK = block
    try:
        for start in {0, data.find(b"\n") + 1}:
            number = data.count(b"\n", 0, start)
            blocks, one = [], []
            args = (start, number, "n", warn_after)
            got = list(line_reading.read_lines(io.BytesIO(data), *args, blocks, None))
            want = list(line_reading._line_by_line(io.BytesIO(data), *args, one, None))
            assert got == want
            assert blocks == one
    finally:
        line_reading.BLOCK = was


def test_a_line_longer_than_a_block_is_read_whole(monkeypatch):
    monkeypatch.setattr(line_reading, "BLOCK", 4)
    data = b"short\n" + b"x" * 50 + b"\nend"
    got = list(line_reading.read_lines(io.BytesIO(data), 0, 0, "n", 0, [], None))
    assert got == [(1, "short", 6), (2, "x" * 50, 57), (3, "end", 60)]
