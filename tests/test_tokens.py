"""The token layer (SPEC.md §Anchors, the token paragraph and "Line forms"): separators,
link-ish sources, and the shapes the resolver reads (``url``, ``tick``, ``fragment``,
``cited_path`` kinds), with exact tokens for each rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brainmigrate.model import Segment
from brainmigrate.read import tokens
from brainmigrate.read.cited import cited_link, cited_path, link_path, path_like
from brainmigrate.read.consumed import consumed, may_span, span_regions
from brainmigrate.read.links import remote_parts, repo_url_parts
from brainmigrate.read.modules import module_candidates
from brainmigrate.read.tokens import Token


def all_of(text, **kw):
    return list(tokens.tokens([Segment(1, 1, text)], **kw))


def toks(text, **kw):
    return [(t.text, t.col, t.lines) for t in tokens.tokens([Segment(1, 1, text)], **kw)]


def one(text, **kw):
    [tok] = tokens.tokens([Segment(1, 1, text)], **kw)
    return tok


# ------------------------------------------------------------------------------ separators


@pytest.mark.parametrize(
    "text, expected",
    [
        ("`api/a.ts`→`api/b.ts`", [("api/a.ts", 2, None), ("api/b.ts", 13, None)]),
        ("a.ts⇒b.ts", [("a.ts", 1, None), ("b.ts", 6, None)]),
        ("a.ts⟶b.ts", [("a.ts", 1, None), ("b.ts", 6, None)]),  # U+27F6
        ("a.ts⤳b.ts", [("a.ts", 1, None), ("b.ts", 6, None)]),  # U+2933
        ("a.ts->b.ts", [("a.ts", 1, None), ("b.ts", 7, None)]),
        ("a.ts=>b.ts", [("a.ts", 1, None), ("b.ts", 7, None)]),
        ("old/a.py-->new/a.py:3", [("old/a.py", 1, None), ("new/a.py", 12, (3, 3))]),
        ("src/x.py->", [("src/x.py", 1, None)]),
        ("a/x.md==>b/y.md", [("a/x.md", 1, None), ("b/y.md", 10, None)]),
    ],
)
def test_arrows_split_tokens_as_whitespace_does(text, expected):
    assert toks(text) == expected


def test_a_paren_after_a_closing_angle_bracket_splits():
    assert toks("com.x.LedgerWriter.<init>(LedgerWriter.kt:3)") == [
        ("com.x.LedgerWriter.<init", 1, None),
        ("LedgerWriter.kt", 27, (3, 3)),
    ]
    assert tokens.camelcase_names("com.x.LedgerWriter.<init") == ["LedgerWriter"]
    assert toks("app/(auth)/login/page.tsx") == [("app/(auth)/login/page.tsx", 1, None)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("bonus.ts's", ("bonus.ts", 1, None)),
        ("bonus.ts’s", ("bonus.ts", 1, None)),
        ("PaymentGateway's", ("PaymentGateway", 1, None)),
        ("src/pay.ts's,", ("src/pay.ts", 1, None)),
        ("**src/pay.ts**'s", ("src/pay.ts", 3, None)),
        ("`src/pay.ts`’s.", ("src/pay.ts", 2, None)),
        ("src/pay.ts:12's", ("src/pay.ts", 1, (12, 12))),
    ],
)
def test_a_trailing_possessive_is_no_part_of_a_token(text, expected):
    assert toks(text) == [expected]


def test_a_double_bracket_inside_a_path_opens_no_wiki_link():
    assert toks("app/[[...filters]]/page.tsx") == [("app/[[...filters]]/page.tsx", 1, None)]
    assert toks("see app/[[...slug]]/page.tsx:4") == [("app/[[...slug]]/page.tsx", 5, (4, 4))]
    # after whitespace, "(" or "!" it is a wiki link, spaces and all
    assert toks("[[docs/My flow.md|alias]] (![[assets/a b.png]])") == [
        ("docs/My flow.md", 3, None),
        ("assets/a b.png", 31, None),
    ]
    assert span_regions("app/[[TER-1 x]]/page.tsx") == []
    assert span_regions("x [[docs/TER-1 x.md]]") == [(4, 19)]


@pytest.mark.parametrize(
    "token, lines",
    [
        ("x.py:18–74", (18, 74)),  # en dash
        ("x.py:18—74", (18, 74)),  # em dash
        ("x.py:18−74", (18, 74)),  # minus sign
        ("x.py:12–20,41–55", (12, 55)),
        ("x.py:12-20,41−55", (12, 55)),
        ("x.py#L10–L20", (10, 20)),
        ("x.py#L10—20", (10, 20)),
        ("x.py#L10C5–L20C8", (10, 20)),
        ("x.py:7–7:3", (7, 7)),
    ],
)
def test_line_ranges_with_other_dashes(token, lines):
    assert toks("src/" + token) == [("src/x.py", 1, lines)]


def test_a_dash_range_is_consumed_whole():
    # the line form is consumed with the path: no task id is read in it
    text = "src/x.py:18–74 and x.py#L10–L20"
    assert consumed(text) == [(0, 14), (23, 31)]


# ------------------------------------------------------------------------------ mdc:, file:


def test_a_leading_mdc_is_dropped_and_the_token_is_a_link_target():
    label, link = tokens.tokens([Segment(1, 1, "[Account](mdc:app/Models/Account.php)")])
    assert label == Token("Account", 1, 2, end=9)
    assert link == Token("app/Models/Account.php", 1, 15, link=True, end=37)
    assert one("mdc:app/x.php:3") == Token("app/x.php", 1, 5, (3, 3), link=True, end=16)
    assert one("@mdc:README.md") == Token("README.md", 1, 6, link=True, end=15)
    assert link_path("README.md") == "README.md"
    assert consumed("see mdc:docs/TER-9.md") == [(8, 21)]


@pytest.mark.parametrize(
    "text, path, col",
    [
        ("file:///D:/dev/app/x.php", "D:/dev/app/x.php", 9),
        ("file:///home/u/x.py", "/home/u/x.py", 8),
        ("file:/home/u/x.py", "/home/u/x.py", 6),
        ("file://localhost/srv/x.md", "/srv/x.md", 17),
        ("file://fileserver/share/x.md", "//fileserver/share/x.md", 6),
        ("<file:///C:/a%20b/x.php>", "C:/a%20b/x.php", 10),
        ("FILE:///tmp/a.md", "/tmp/a.md", 8),
    ],
)
def test_a_file_url_is_the_absolute_path_it_names(text, path, col):
    tok = one(text)
    assert (tok.text, tok.col, tok.url, tok.link) == (path, col, False, False)
    # its text is the line's text at its column, as written (fix rewrites it there)
    assert text[col - 1 : col - 1 + len(path)] == path
    assert path_like(tok.text) == path


def test_a_file_url_keeps_its_line_form():
    assert toks("file:///home/u/x.py:12-14") == [("/home/u/x.py", 8, (12, 14))]


# ------------------------------------------------------------------------------ HTML


def test_href_and_src_values_are_link_targets_spaces_and_all():
    text = (
        '<a href="runbooks/cold start.md">x</a> <img src=\'docs/img/x.png\' alt="Foo Bar">'
        " <a HREF=docs/y.md> <link href = 'a b.css'>"
    )
    found = [(t.text, t.col, t.link) for t in tokens.tokens([Segment(1, 1, text)]) if t.link]
    assert found == [
        ("runbooks/cold start.md", 10, True),
        ("docs/img/x.png", 50, True),
        ("docs/y.md", 89, True),
        ("a b.css", 114, True),
    ]


def test_an_href_value_keeps_its_fragment_and_url_flag():
    [tok] = [
        t for t in tokens.tokens([Segment(1, 1, '<a href="./ops.md#rollback">r</a>')]) if t.link
    ]
    assert (tok.text, tok.fragment, tok.whole) == ("./ops.md", "rollback", "./ops.md#rollback")
    [url] = [t for t in tokens.tokens([Segment(1, 1, "<a href=https://x.org/a.md>")]) if t.link]
    assert (url.text, url.url) == ("https://x.org/a.md", True)


def test_attributes_other_than_href_and_src_and_open_quotes_give_no_link():
    text = '<img alt="docs/a b.png" data-src="x y.png"> <a href="never closed.md'
    assert [t for t in tokens.tokens([Segment(1, 1, text)]) if t.link] == []
    assert [t for t in tokens.tokens([Segment(1, 1, "a <b> href=x.md c=d")]) if t.link] == []


def test_an_href_value_is_read_as_written_markdown_escapes_and_all():
    # raw HTML takes no Markdown escapes (CommonMark): the value is the line's text at its
    # column, so ``check --fix`` rewrites what is there (a case hypothesis found)
    text = "<a src='a\\<src=' <a href=\"docs\\<x>.md\">"
    found = [(t.text, t.col) for t in tokens.tokens([Segment(1, 1, text)]) if t.link]
    assert found == [("a\\<src=", 9), ("docs\\<x>.md", 27)]
    for tok, col in found:
        assert text[col - 1 : col - 1 + len(tok)] == tok


def test_no_task_id_is_read_in_an_href_with_spaces():
    text = '<a href="runbooks/TER-9 cold.md">x</a> for TER-3'
    assert span_regions(text) == [(9, 31)]
    assert may_span(text)


# ------------------------------------------------------------------------------ references


REFS = {"guide": "docs/guide.md#setup", "adr 7": "docs/adr/0007 fees.md:12", "web": "https://x.org"}


def test_reference_style_links_cite_their_definitions():
    text = "see [the guide][Guide] or [ADR  7][] or [guide], not [guide](x.md) nor [nope]"
    found = [
        (t.text, t.col, t.end, t.lines, t.link, t.fragment)
        for t in tokens.tokens([Segment(3, 5, text)], references=REFS)
        if t.link
    ]
    assert found == [
        ("docs/guide.md", 9, 27, None, True, "setup"),
        ("docs/adr/0007 fees.md", 31, 41, (12, 12), True, None),
        ("docs/guide.md", 45, 52, None, True, "setup"),
        ("x.md", 66, 70, None, True, None),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "[guide](docs/other.md)",  # an inline link
        "[guide]: docs/guide.md",  # a definition
        "[[guide]]",  # a wiki link
        "\\[guide]",  # escaped
        "[x][nope]",  # an undefined label
        "[^guide]",  # a footnote
        "[guide][nope]",  # a full reference cites its second label only
    ],
)
def test_what_is_no_reference(text):
    refs = dict(REFS, **{"^guide": "docs/f.md"})
    got = [t for t in tokens.tokens([Segment(1, 1, text)], references=refs) if t.col == 1]
    assert [t.text for t in got if t.text in ("docs/guide.md", "docs/f.md")] == []


def test_a_reference_inside_a_backtick_span_is_code():
    assert toks("`arr[guide]` and [guide]", references=REFS) == [
        ("arr[guide", 2, None),  # (a trailing "]" is no part of a token)
        ("docs/guide.md", 18, None),
    ]


def test_a_shortcut_reference_in_text_without_anything_else_is_found():
    # a segment no path, dot or CamelCase name is in is still read for references
    assert toks("see [guide] now", references=REFS) == [("docs/guide.md", 5, None)]
    assert toks("see [guide] now") == []


def test_a_reference_to_a_url_is_a_url_token():
    tok = one("[web]", references=REFS)
    assert (tok.text, tok.url, tok.link) == ("https://x.org", True, True)


# ------------------------------------------------------------------------------ shapes


@pytest.mark.parametrize(
    "text, expected",
    [
        ("src/x.py", ("src/x.py", "file")),
        ("docker\\Dockerfile", ("docker/Dockerfile", "file")),
        ("tools/legacy-import/", ("tools/legacy-import", "folder")),
        ("tools\\legacy\\", ("tools/legacy", "folder")),
        ("./app//", ("./app", "folder")),
        ("/srv/data/", ("/srv/data", "folder")),
        ("bin/dev", ("bin/dev", "maybe")),
        ("./gradlew", ("./gradlew", "maybe")),
        (".husky/pre-push", (".husky/pre-push", "maybe")),
        ("and/or", ("and/or", "maybe")),
        ("a/b.", ("a/b.", "maybe")),
        ("/", None),
        ("./", None),
        ("../..", None),
        ("x.py", None),
        ("https://x.org/a/", None),
        ("git@github.com:o/r.git", None),
        ("src/*/", None),
        ("%APPDATA%/x/", None),
        ("//pkg/api:server", None),
        ("@repo//pkg:x.py", None),
    ],
)
def test_cited_path_kinds(text, expected):
    assert cited_path(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0021-ledger.md", ("0021-ledger.md", "file")),
        ("Makefile", ("Makefile", "file")),
        ("editors", ("editors", "maybe")),
        ("docs/", ("docs", "folder")),
        ("docs/setup", ("docs/setup", "maybe")),
        ("#intro", None),
        ("mailto:a@b.org", None),
        ("me@example.com", None),
        ("www.example.com", None),
        ("..", None),
        ("", None),
    ],
)
def test_cited_link_kinds(text, expected):
    assert cited_link(text) == expected


def test_the_resolvers_tokens_say_url_tick_and_fragment():
    text = (
        "`app-shared` https://github.com/o/r/blob/main/src/x.py#L10-L20 docs/x.md#rollback-steps"
        " `src/y.py:3`, https://host:8080"
    )
    got = [
        (t.text, t.lines, t.url, t.tick, t.fragment) for t in tokens.tokens([Segment(1, 1, text)])
    ]
    assert got == [
        ("app-shared", None, False, True, None),
        ("https://github.com/o/r/blob/main/src/x.py", (10, 20), True, False, None),
        ("docs/x.md", None, False, False, "rollback-steps"),
        ("src/y.py", (3, 3), False, True, None),
        ("https://host:8080", None, True, False, None),
    ]


def test_tick_is_for_a_whole_backtick_span_only():
    got = [
        (t.text, t.tick) for t in tokens.tokens([Segment(1, 1, "`pytest tests/x.py` `a`b `c/`")])
    ]
    assert got == [("pytest", False), ("tests/x.py", False), ("a`b", False), ("c/", True)]
    held = tokens.tokens([Segment(1, 1, "`docs/My Notes.md`")], holds=lambda p: True)
    assert [(t.text, t.tick) for t in held] == [("docs/My Notes.md", True)]


def test_a_link_target_without_slash_or_dot_is_a_token():
    assert toks("[the editors](editors)") == [("editors", 6, None), ("editors", 15, None)]


def test_a_folder_citation_consumes_its_text_but_a_maybe_does_not():
    assert consumed("tools/TER-9/ and feature/TER-12") == [(0, 12)]
    url = "https://github.com/o/r/blob/main/docs/TER-9.md#L3"
    assert consumed(url) == [(0, len(url))]
    assert consumed("https://jira.example.org/browse/TER-9") == []


@pytest.mark.parametrize(
    "text, tasks",
    [
        ('<a href="runbooks/TER-9 cold.md">x</a> for TER-3', ["TER-3"]),
        ("see mdc:docs/TER-9.md and TER-4", ["TER-4"]),
        ("tools/TER-9/ and feature/TER-12", ["TER-12"]),
        ("https://github.com/o/r/blob/main/docs/TER-9.md#L3 TER-5", ["TER-5"]),
        ("x.py:12–20 and x.py#L3–L9 TER-6", ["TER-6"]),
        ("https://jira.example.org/browse/TER-7", ["TER-7"]),
        ("file:///srv/TER-8.md:3 a.ts->src/TER-2.ts", []),
    ],
)
def test_no_task_id_is_read_in_the_new_path_forms(text, tasks):
    from brainmigrate.read.facts import TaskIds

    assert TaskIds().all(text) == tasks


def test_a_single_name_href_is_a_link_token():
    got = [(t.text, t.col) for t in all_of('<a href="editors">the editors</a>') if t.link]
    assert got == [("editors", 10)]


def test_holds_decides_a_spaced_backtick_span_of_any_cited_kind():
    asked = []

    def holds(text):
        asked.append(text)
        return text in ("docs/Design Notes/", "bin/run me")

    text = "`docs/Design Notes/` `bin/run me` `not a path` `docs/Old Notes/`"
    got = [(t.text, t.tick) for t in tokens.tokens([Segment(1, 1, text)], holds=holds)]
    assert got == [
        ("docs/Design Notes/", True),
        ("bin/run me", True),
        ("not", False),
        ("path", False),
        ("docs/Old", False),  # no root holds it: split at its space
        ("Notes/", False),
    ]
    assert asked == ["docs/Design Notes/", "bin/run me", "docs/Old Notes/"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("@docs/x.md", ("docs/x.md", 2, True)),
        ("(@/lib/date.ts)", ("/lib/date.ts", 3, True)),
        ("**@tallyfin/tokens/src/colors.ts**", ("tallyfin/tokens/src/colors.ts", 4, True)),
        ("`@types/node/index.d.ts`", ("types/node/index.d.ts", 3, True)),
        ("docs/x.md", ("docs/x.md", 1, False)),
        ("a@b/x.md", ("a@b/x.md", 1, False)),
    ],
)
def test_a_stripped_leading_at_is_kept_as_a_flag(text, expected):
    tok = one(text)
    assert (tok.text, tok.col, tok.at) == expected


# ------------------------------------------------------------------------------ properties

PIECES = st.sampled_from(
    [
        "a", "B", "src/", "x.py", ".md", "/", "\\", ":", "12", "-", "\u2013", "#L", "#", "?",
        "::", "`", "[", "]", "(", ")", "<", ">", '"', "'", "'s", "\u2019", "@", "mdc:",
        "file://", "file:///", "D:/", "https://", "github.com/o/r/blob/main/", "->", "\u2192",
        "=", "href=", "<a ", "src='", "[[", "]]", "|", "*", "$", "%X%", "//", " ", "\u3000",
        "\u89c1", "\u200b", "e.g.", "-m ", "import ", "a.b",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=24).map("".join))
def test_a_token_is_the_text_at_its_column(text):
    # fix rewrites a citation at its column: every token but a reference's is the line's
    # text there, as written, and ends where what it consumed ends
    for tok in tokens.tokens([Segment(1, 1, text)], holds=lambda p: True):
        assert text[tok.col - 1 : tok.col - 1 + len(tok.text)] == tok.text, tok
        assert tok.end >= tok.col + len(tok.text), tok
        assert tok.end - 1 <= len(text), tok
        cited_path(tok.text), cited_link(tok.text), repo_url_parts(tok.text)
    consumed(text), span_regions(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(PIECES, max_size=24).map("".join))
def test_references_and_modules_take_any_text(text):
    for tok in tokens.tokens([Segment(1, 1, text)], references={"a": text, "b": "x.md"}):
        assert tok.col >= 1 and tok.end > tok.col, tok
    for cand in module_candidates([Segment(1, 1, text)]):
        assert text[cand.col - 1 :].startswith(cand.name), cand
    remote_parts(text)


# ------------------------------------------------------------------------------ real notes


@pytest.mark.parametrize(
    "text, expected",
    [
        # a Markdown escape or a hard break is no path separator (jabref's AGENTS.md)
        (
            r"Fill every section: \"Steps to test\", \"AI usage\".",
            [("Fill", 1, None), ("Steps", 23, None)],
        ),
        (
            r"use \"org.jabref.logic.util.BackgroundTask\" and",
            [("org.jabref.logic.util.BackgroundTask", 7, None)],
        ),
        ("restart.\\", [("restart", 1, None)]),
        (r"x \| y/z and \*x\*", [("y/z", 6, None)]),
        # a backslash before a name stays a separator of a Windows path
        (r"D:\dev\shop\app\X.php:3", [(r"D:\dev\shop\app\X.php", 1, (3, 3))]),
        (r"app\[slug]\page.tsx", [(r"app\[slug]\page.tsx", 1, None)]),
        # HTML closing and empty tags are no paths; a path in angle brackets is one
        ("</code-snippet> and <br/> and <docs/x.md>", [("docs/x.md", 32, None)]),
        # a link label that shows its target is no second citation (pydantic-ai's notes)
        (
            "[pkg/realtime/AGENTS.md](../../pkg_slim/pkg/realtime/AGENTS.md).",
            [("../../pkg_slim/pkg/realtime/AGENTS.md", 26, None)],
        ),
        ("[`src/x.py`](./src/x.py)", [("./src/x.py", 14, None)]),
        ("[src/x.py](src/y.py)", [("src/x.py", 2, None), ("src/y.py", 12, None)]),
        # a glob's edge is no emphasis (coolify's AGENTS.md); bold around a path is
        ("skills in `**/skills/**` and src/*", []),
        ("**docs/x.md** and **`docs/y.md`**", [("docs/x.md", 3, None), ("docs/y.md", 22, None)]),
    ],
)
def test_shapes_of_real_notes(text, expected):
    assert toks(text) == expected


def test_a_definition_naming_another_label_is_no_link_target():
    """``[x]: [y]`` (a reference loop a new user wrote) cites no file ``[y]``."""
    from brainmigrate.read.cited import cited_link

    assert cited_link("[y]") is None
    assert cited_link("y.md") == ("y.md", "file")


@pytest.mark.parametrize(
    "text, spans",
    [
        ("a `b` c", [(2, 5)]),
        ("``a ` b`` c `d`", [(0, 9), (12, 15)]),
        ("\\`a` `b`", [(3, 6)]),  # the escaped backtick opens nothing: `a` is no span
        ("\\\\`a`", [(2, 5)]),  # an escaped backslash: the backtick opens
        ("`a", []),
        ("```a`", []),
    ],
)
def test_code_spans_open_and_close_with_runs_of_one_length(text, spans):
    from brainmigrate.read.charclasses import code_spans

    assert code_spans(text) == spans


def test_a_backslash_in_a_code_span_is_the_character_itself():
    # found by test_a_token_is_the_text_at_its_column: the \ of `file://\#L` was read as
    # an escape and the token's text held a space the line does not
    text = "`file://\\#L`"
    assert [
        (t.col, t.text) for t in tokens.tokens([Segment(1, 1, text)], holds=lambda p: True)
    ] == [(7, "//\\#L")]
    # outside a code span the escape stays no separator
    from brainmigrate.read.charclasses import unescaped

    assert unescaped("a\\#b `c\\#d` e\\|f") == "a #b `c\\#d` e |f"


# ------------------------------------------------------------------ the whole-text chunk scan

#: Texts whose chunks pass or fail ``_plain``'s test at every edge the candidate scan reads:
#: each separator, each character it looks for, at a chunk's start, middle and end.
_EDGES = [
    "cache foo/bar.py x Foo a`b` [x](y) z]q plain words.",
    "\tsrc/a.py\x0bB\x0cc\rD.e\nf\\g  `h`  ]",
    "aB Ab ab. .ab a/b /ab ab/ a\\b \\ab ab\\ `a a` ]( ](x) x](y)",
    "Ab\x1cc x\x1c/y AB ABc aBC SHA-256 TER-1 docs/TER-9.md",
    "-> a.ts->b.ts => x=>Y, src/a.py,src/b.py;c.py|d.py",
    "",
    " ",
    "a" * 50 + "B" + "c" * 50 + " " + "/" * 3,
]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aB/.\\`]( \t\x0b\x0c\r\x1cz-:>,", max_size=40))
def test_the_candidate_scan_gives_the_tokens_of_every_chunk(text):
    """In ASCII text ``_plain`` reads only the chunks ``_CANDIDATE`` finds: the tokens are
    those of reading every chunk (``_CHUNK``)."""
    assert _plain_tokens(text, tokens._CANDIDATE) == _plain_tokens(text, tokens._CHUNK)


@pytest.mark.parametrize("text", _EDGES)
def test_the_candidate_scan_keeps_each_edge_case(text):
    assert _plain_tokens(text, tokens._CANDIDATE) == _plain_tokens(text, tokens._CHUNK)


def test_the_candidate_scan_is_linear_in_a_chunk_of_one_letter():
    """A match starts only at a chunk's start: one long chunk is read once, not once a
    position (200,000 letters and no candidate take one pass)."""
    assert list(tokens._CANDIDATE.finditer("a" * 200_000)) == []
    assert [m.span() for m in tokens._CANDIDATE.finditer("a" * 100_000 + "B")] == [(0, 100_001)]


def _plain_tokens(text, chunks):
    assert text.isascii()
    was = tokens._CANDIDATE
    tokens._CANDIDATE = chunks
    try:
        out = []
        tokens._plain(text, 3, 5, out)
        return [repr(t) for t in out]
    finally:
        tokens._CANDIDATE = was
