"""Token digests (SPEC.md §Staleness, issue 25): every digest of code the index reads is
over its tokens, so a re-flow or a comment edit changes none; attributes and decorators
are part of a declaration's header; a variable's value is its body; a file that declares
nothing is digested whole, comments too; ``line_texts`` reads tokens per line."""

from __future__ import annotations

import json

import pytest
from clirun import cli
from trees import git, write

from brainmigrate.codeindex.extract import EXTRACTOR_VERSION, digest, extract_file
from brainmigrate.codeindex.tokens import line_texts


def decls(language: str, text: str) -> dict[str, tuple[tuple[int, int], str, str | None]]:
    """``name -> ((first line, last line), signature digest, body digest)`` of a source."""
    _error, rows, _file = extract_file(text.encode(), language)
    return {r[0]: ((r[3], r[4]), r[6], r[7]) for r in rows}


def file_digest(language: str, text: str) -> str:
    return extract_file(text.encode(), language)[2]


def same_digests(language: str, a: str, b: str) -> None:
    """``a`` and ``b`` give the same declarations with the same digests and file digest."""
    da, db = decls(language, a), decls(language, b)
    assert da.keys() == db.keys() and da
    assert {n: v[1:] for n, v in da.items()} == {n: v[1:] for n, v in db.items()}
    assert file_digest(language, a) == file_digest(language, b)


def changed(language: str, a: str, b: str, name: str) -> tuple[bool, bool]:
    """Whether ``name``'s (signature, body) digest differs between ``a`` and ``b``."""
    (_, sig_a, body_a), (_, sig_b, body_b) = decls(language, a)[name], decls(language, b)[name]
    return sig_a != sig_b, body_a != body_b


def test_extractor_version_is_the_lazy_digests_one():
    """4: a parsed entry may hold no digests (an older reader would take None for one)."""
    assert EXTRACTOR_VERSION == 4


# ------------------------------------------------------------------ re-flows and comments

REFLOWS = {
    "rust": (
        "fn add(a:i32,b:i32)->i32{a+b}\n",
        "fn add(\n    a: i32,\n    b: i32\n) -> i32 {\n    a + b\n}\n",
    ),
    "typescript": (
        "export function total(a,b){return sum(a,b)}\n",
        "export function total( a, b ) {\n  return sum( a, b )\n}\n",
    ),
    "go": (
        "package a\n\nfunc F(a,b int)int{\nreturn a+b\n}\n",
        "package a\n\nfunc F(a, b int) int {\n\treturn a + b\n}\n",
    ),
    "python": (
        "class A:\n  def f(self):\n    return g(1,\n      2)\n",
        "class A:\n    def f(self):\n        return g(1, 2)\n",
    ),
    "kotlin": (
        "fun fee(x:Int):Int{return x*2}\n",
        "fun fee(\n    x: Int\n): Int {\n    return x * 2\n}\n",
    ),
}


@pytest.mark.parametrize("language", sorted(REFLOWS))
def test_a_re_flow_changes_no_digest(language):
    same_digests(language, *REFLOWS[language])


@pytest.mark.parametrize("language", sorted(REFLOWS))
def test_crlf_and_a_bom_change_no_digest(language):
    text = REFLOWS[language][1]
    crlf = "\ufeff" + text.replace("\n", "\r\n")
    assert extract_file(crlf.encode(), language) == extract_file(text.encode(), language)


COMMENTED = {
    "rust": (
        "/// Adds.\nfn add(a: i32) -> i32 {\n    // one more\n    a + 1 /* x */\n}\n",
        "/// Adds two.\n/// More.\nfn add(a: i32) -> i32 {\n    // two more\n    a + 1\n}\n",
    ),
    "typescript": (
        "/** Sums. */\nexport function total(a) {\n  // note\n  return a + 1;\n}\n",
        "/** Sums it all. */\nexport function total(a) {\n  return a + 1; // later\n}\n",
    ),
    "python": (
        "def f(a):\n    # one\n    return a + 1\n",
        "def f(a):  # the f\n    # two\n    return a + 1  # end\n",
    ),
    "go": (
        "package a\n\n// F is.\nfunc F() int {\n\t// one\n\treturn 1\n}\n",
        "package a\n\n// F is not.\nfunc F() int {\n\treturn 1 // two\n}\n",
    ),
}


@pytest.mark.parametrize("language", sorted(COMMENTED))
def test_a_comment_edit_changes_no_digest(language):
    same_digests(language, *COMMENTED[language])


def test_a_token_edit_is_a_body_change_and_a_header_edit_a_signature_change():
    base = "fn add(a: i32) -> i32 {\n    a + 1\n}\n"
    assert changed("rust", base, base.replace("a + 1", "a + 2"), "add") == (False, True)
    assert changed("rust", base, base.replace("-> i32", "-> i64"), "add") == (True, True)


@pytest.mark.parametrize(
    ("language", "text", "edit"),
    [
        ("scala", 'object A {\n  def f(y: Int) = s"x $y"\n}\n', ("x $y", "z $y")),
        ("kotlin", 'fun f(x: Int) = g("x")\n', ('g("x")', "g(x)")),
    ],
)
def test_text_that_no_leaf_holds_is_a_token_too(language, text, edit):
    """Scala's interpolated strings and Kotlin's quotes are no leaves of their grammars."""
    assert changed(language, text, text.replace(*edit), "f") == (False, True)


def test_a_missing_token_the_parser_supplies_is_no_token():
    error, rows, _file = extract_file(b"fn f() -> i32 {\n    g(1\n}\n", "rust")
    assert error is True
    assert rows[0][6:] == (digest(b"fn f ( ) -> i32"), digest(b"fn f ( ) -> i32 { g ( 1 }"))


def test_a_python_docstring_is_no_body():
    base = 'def f(a):\n    """Doc."""\n    return a\n'
    assert changed("python", base, base.replace("Doc.", "Reworded."), "f") == (False, False)


def test_tokens_are_joined_by_one_space_and_a_string_keeps_its_words():
    got = decls("rust", 'const X: &str = "a  b";\n')["X"]
    assert got == ((1, 1), digest(b"const X : & str"), digest(b'const X : & str = " a b " ;'))


# ------------------------------------------------------------------ values

VALUES = [
    # (language, source, name, the value edited, the header edited)
    (
        "kotlin",
        "class FeeTable {\n    private val rates = mapOf(1 to 2)\n}\n",
        "rates",
        ("1 to 2", "1 to 3"),
        ("val rates =", "val rates: Map<Int, Int> ="),
    ),
    ("python", "X = 3\n", "X", ("3", "4"), ("X =", "X: int =")),
    (
        "python",
        "class A:\n    y: int = 4\n",
        "y",
        ("= 4", "= 5"),
        ("int", "float"),
    ),
    ("typescript", "class A {\n  x = 3;\n}\n", "x", ("3;", "4;"), ("x =", "x: number =")),
    ("typescript", "export const Y = 4;\n", "Y", ("4", "5"), ("Y =", "Y: number =")),
    ("rust", "const X: i32 = 3;\n", "X", ("3;", "4;"), ("i32", "i64")),
    ("rust", 'static S: &str = "a";\n', "S", ('"a"', '"b"'), ("static S", "static mut S")),
    ("go", "package a\n\nconst X = 3\n", "X", ("3", "4"), ("X =", "X int =")),
    ("go", "package a\n\nvar V int = 4\n", "V", ("4", "5"), ("int", "int64")),
    ("go", "package a\n\nvar (\n\tV int = 4\n\tW = 1\n)\n", "V", ("4", "5"), ("int", "int64")),
    ("csharp", "class A {\n    private int count = 3;\n}\n", "count", ("3", "4"), ("int", "long")),
    (
        "java",
        "class A {\n    static final int SIDES = 4;\n}\n",
        "SIDES",
        ("4", "5"),
        ("static final", "final"),
    ),
]


@pytest.mark.parametrize(("language", "text", "name", "value", "header"), VALUES)
def test_a_value_edit_is_a_body_change_and_a_type_edit_a_signature_change(
    language, text, name, value, header
):
    assert changed(language, text, text.replace(*value), name) == (False, True)
    assert changed(language, text, text.replace(*header), name) == (True, True)


def test_a_rename_is_another_declaration_and_the_header_is_the_text_before_the_value():
    got = decls("kotlin", "class FeeTable {\n    private val rates = mapOf(1 to 2)\n}\n")
    assert got["rates"] == (
        (2, 2),
        digest(b"private val rates"),
        digest(b"private val rates = mapOf ( 1 to 2 )"),
    )


def test_a_declaration_without_body_or_value_is_all_header():
    text = "struct P {\n    x: i32,\n}\n"
    assert decls("rust", text)["x"] == ((2, 2), digest(b"x : i32"), None)
    assert changed("rust", text, text.replace("i32", "i64"), "x") == (True, False)


# ------------------------------------------------------------------ attributes, decorators

RUST_ATTRIBUTES = (
    "#![allow(dead_code)]\n"
    "\n"
    "// not part of it\n"
    "#[derive(Debug)]\n"
    "/// A point.\n"
    "#[cfg(test)]\n"
    "pub struct P {\n"
    "    x: i32,\n"
    "}\n"
    "\n"
    "impl P {\n"
    "    #[inline]\n"
    "    pub fn get(&self) -> i32 {\n"
    "        self.x\n"
    "    }\n"
    "}\n"
)


def test_rust_attributes_start_the_declaration_and_inner_ones_do_not():
    got = decls("rust", RUST_ATTRIBUTES)
    assert {name: lines for name, (lines, _s, _b) in got.items()} == {
        "P": (11, 16),  # the impl (a later row of the same name)
        "x": (8, 8),
        "get": (12, 15),
    }
    _error, rows, _file = extract_file(RUST_ATTRIBUTES.encode(), "rust")
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [
        ("P", "struct", 4, 9),
        ("x", "field", 8, 8),
        ("P", "impl", 11, 16),
        ("get", "method", 12, 15),
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("#[derive(Debug)]", "#[derive(Debug, Clone)]"),
        ("#[cfg(test)]", '#[cfg(feature = "x")]'),
        ("#[cfg(test)]\n", "#[cfg(test)]\n#[deprecated]\n"),
    ],
)
def test_a_rust_attribute_change_is_a_signature_change(old, new):
    edited = RUST_ATTRIBUTES.replace(old, new)
    assert changed("rust", RUST_ATTRIBUTES, edited, "x") == (False, False)
    struct = extract_file(RUST_ATTRIBUTES.encode(), "rust")[1][0]
    now = extract_file(edited.encode(), "rust")[1][0]
    assert (struct[1], struct[6] != now[6], struct[7] != now[7]) == ("struct", True, True)


def test_a_method_attribute_added_is_a_signature_change_and_a_doc_edit_none():
    deprecated = RUST_ATTRIBUTES.replace("    #[inline]\n", "    #[inline]\n    #[deprecated]\n")
    assert changed("rust", RUST_ATTRIBUTES, deprecated, "get") == (True, True)
    documented = RUST_ATTRIBUTES.replace("/// A point.", "/// A point in the plane.")
    same_digests("rust", RUST_ATTRIBUTES, documented)


DECORATED = [
    # (language, source, name, its lines, the decorator edited)
    (
        "typescript",
        "class A {\n  @Input()\n  // the value\n  m() {}\n}\n",
        "m",
        (2, 4),
        ("@Input()", "@Output()"),
    ),
    (
        "typescript",
        "class A {\n  @Input() x = 3;\n}\n",
        "x",
        (2, 2),
        ("@Input()", "@Output()"),
    ),
    (
        "csharp",
        "class A {\n    [Obsolete]\n    public void M() {}\n}\n",
        "M",
        (2, 3),
        ("[Obsolete]", '[Obsolete("no")]'),
    ),
    (
        "php",
        "<?php\nclass A {\n    #[Pure]\n    public function m() {}\n}\n",
        "m",
        (3, 4),
        ("#[Pure]", "#[Impure]"),
    ),
    (
        "java",
        "class A {\n    @Deprecated\n    void m() {}\n}\n",
        "m",
        (2, 3),
        ("@Deprecated", "@Override"),
    ),
    (
        "kotlin",
        "class A {\n    @JvmStatic\n    fun m() {}\n}\n",
        "m",
        (2, 3),
        ("@JvmStatic", "@JvmOverloads"),
    ),
    (
        "python",
        "class A:\n    @property\n    def m(self):\n        return 1\n",
        "m",
        (2, 4),
        ("@property", "@cached_property"),
    ),
]


@pytest.mark.parametrize(("language", "text", "name", "lines", "edit"), DECORATED)
def test_decorators_and_annotations_start_the_declaration_and_belong_to_its_header(
    language, text, name, lines, edit
):
    assert decls(language, text)[name][0] == lines
    assert changed(language, text, text.replace(*edit), name) == (True, True)


# ------------------------------------------------------------------ file digests


def test_the_file_digest_is_every_token_but_comments():
    text = "// one\nuse std::fmt;\n\nfn f() {\n    // two\n    g()\n}\n"
    assert file_digest("rust", text) == digest(b"use std :: fmt ; fn f ( ) { g ( ) }")
    same = text.replace("// one", "// uno").replace("// two", "/* dos */")
    assert file_digest("rust", same) == file_digest("rust", text)
    assert file_digest("rust", text.replace("fmt", "io")) != file_digest("rust", text)


@pytest.mark.parametrize(
    ("language", "text", "edit"),
    [
        ("python", "# Settings are read from the environment.\n", ("environment", "config")),
        ("rust", "//! The crate's docs.\n", ("docs", "manual")),
        ("go", "// Package a does.\npackage a\n", ("does", "did")),
        ("typescript", "import { a } from './a';\n// re-exported\n", ("re-exported", "kept")),
        ("python", "import os\nimport sys  # for argv\n", ("argv", "path")),
    ],
)
def test_a_file_that_declares_nothing_is_digested_whole_comments_too(language, text, edit):
    assert extract_file(text.encode(), language)[1] == ()
    assert file_digest(language, text.replace(*edit)) != file_digest(language, text)
    reflowed = text.replace(" ", "  ").replace("\n", "\n\n")
    assert file_digest(language, reflowed) == file_digest(language, text)


def test_a_comment_only_file_digest_is_its_comments():
    assert file_digest("python", "# a\n\n# b\n") == digest(b"# a # b")


# ------------------------------------------------------------------ line texts


def test_line_texts_of_code_are_its_tokens_per_line():
    text = b'x = f(a,b)  # note\ny = 2\ns = """one\n  two"""\n'
    assert line_texts(text, "python") == [
        b"x = f ( a , b )",
        b"y = 2",
        b's = """ one two',  # a token spanning lines belongs to its first line
        b'"""',
        b"",
    ]
    reflowed = b'x = f( a, b )\ny = 2  # two\ns = """one\n  two"""\n'
    assert line_texts(reflowed, "python") == line_texts(text, "python")


def test_line_texts_of_rust_leave_out_doc_comments():
    text = b"/// Doc.\n#[inline]\nfn f(){ g() } // end\n"
    assert line_texts(text, "rust") == [b"", b"# [ inline ]", b"fn f ( ) { g ( ) }", b""]


def test_line_texts_of_other_files_fold_whitespace():
    assert line_texts(b"  a   b \n\tc\n", None) == [b"a b", b"c", b""]


# ------------------------------------------------------------------ stale, end to end

POINT_RS = (
    "#[derive(Debug)]\n"
    "/// A point.\n"
    "pub struct PlanePoint {\n"
    "    x: i32,\n"
    "}\n"
    "\n"
    "impl PlanePoint {\n"
    "    #[inline]\n"
    "    pub fn get(&self) -> i32 {\n"
    "        self.x\n"
    "    }\n"
    "}\n"
)


@pytest.fixture
def rust_repo(tmp_path, monkeypatch):
    """A git checkout of one Rust file; notes citing its struct by name and its method's
    lines from its attribute on, imported with ``--verify``."""
    repo = tmp_path / "repo"
    write(repo, {"src/point.rs": POINT_RS})
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "point")
    write(
        tmp_path,
        {
            "notes/code.md": "+ PlanePoint derives Debug only TER-401\n"
            "+ get is inlined, src/point.rs:8-11 TER-402\n"
        },
    )
    monkeypatch.chdir(tmp_path)
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0, r.output
    return repo


def states() -> dict[str, tuple[str, str | None]]:
    r = cli("stale", "--store", "know.db", "--format", "json", "--dry-run")
    return {f["id"]: (f["state"], f["reason"]) for f in json.loads(r.output)["facts"]}


def test_stale_sees_a_derive_change_and_reads_a_cited_attribute_on_its_method(rust_repo):
    path = rust_repo / "src/point.rs"
    fresh = {"k1": ("fresh", None), "k2": ("fresh", None)}
    assert states() == fresh
    # a re-flow and a doc comment edit change nothing; another method in the impl neither
    # changes the method whose lines (from its attribute on) are cited
    path.write_text(
        POINT_RS.replace("/// A point.", "/// A point in the plane.")
        .replace("self.x\n", "self\n            .x\n")
        .replace("    }\n}\n", "    }\n\n    pub fn zero() -> i32 {\n        0\n    }\n}\n"),
        encoding="utf-8",
    )
    assert states() == fresh
    path.write_text(POINT_RS.replace("(Debug)", "(Debug, Clone)"), encoding="utf-8")
    assert states() == {
        "k1": ("signature changed", "STALE: signature changed: src/point.rs#PlanePoint"),
        "k2": ("fresh", None),
    }
    path.write_text(POINT_RS.replace("#[inline]", "#[inline]\n    #[deprecated]"), "utf-8")
    assert states() == {
        "k1": ("fresh", None),
        "k2": ("signature changed", "STALE: signature changed: src/point.rs#PlanePoint.get"),
    }


# ------------------------------------------- found on real history (clap v4.0 -> today)

LEADING = (
    "rust",
    'fn leading() {\n    let got = vec!["  foo", "bar"];\n    assert!(got.len() == 2);\n}\n',
    "leading",
)


@pytest.mark.parametrize(
    "language, text, old, new, name",
    [
        (*LEADING[:2], '"bar"', '"  bar"', LEADING[2]),
        (*LEADING[:2], '"bar"', '"bar  "', LEADING[2]),
        ("python", 'def f():\n    return "bar"\n', '"bar"', '" bar"', "f"),
        ("typescript", "function f() {\n  return 'bar';\n}\n", "'bar'", "' bar'", "f"),
    ],
)
def test_whitespace_at_the_edge_of_a_string_is_a_change(language, text, old, new, name):
    """Whitespace runs in a token fold to one space but are kept at its edges: clap's
    `vec!["  foo", "bar"]` -> `vec!["  foo", "  bar"]` read unchanged (the joined tokens
    were folded again, which stripped it)."""
    assert changed(language, text, text.replace(old, new), name) == (False, True)
    assert changed(language, text, text.replace(old, old[0] + "b  ar" + old[-1]), name) == (
        False,
        True,
    )
    doubled = text.replace(old, new.replace(" ", "  "))  # a longer run at the same edge
    assert changed(language, text.replace(old, new), doubled, name) == (False, False)


DOC_ATTRIBUTES = """\
#[cfg_attr(feature = "help", doc = " ```")]
/// Sets the value name.
#[cfg_attr(feature = "help", doc = " ```")]
#[must_use]
pub fn value_name(self, name: &str) -> Self {
    self.name(name)
}
"""


def test_rust_doc_attributes_are_doc_comments_not_header():
    """clap 5d0fbb47c replaced `#[cfg_attr(feature = "help", doc = " ```")]` with
    `/// ```rust` over hundreds of methods: a doc edit, no signature change. Other
    attributes stay header."""
    markdown = DOC_ATTRIBUTES.replace('#[cfg_attr(feature = "help", doc = " ```")]', "/// ```rust")
    assert changed("rust", DOC_ATTRIBUTES, markdown, "value_name") == (False, False)
    edited = DOC_ATTRIBUTES.replace('doc = " ```"', 'doc = " ```text"', 1)
    assert changed("rust", DOC_ATTRIBUTES, edited, "value_name") == (False, False)
    plain = DOC_ATTRIBUTES.replace('#[cfg_attr(feature = "help", doc = " ```")]\n', "", 1)
    assert changed("rust", DOC_ATTRIBUTES, '#[doc = "x"]\n' + plain, "value_name") == (
        False,
        False,
    )
    gone = DOC_ATTRIBUTES.replace("#[must_use]\n", "")
    assert changed("rust", DOC_ATTRIBUTES, gone, "value_name") == (True, True)
    assert decls("rust", DOC_ATTRIBUTES)["value_name"][0] == (1, 7)


@pytest.mark.parametrize(
    "text, old, new",
    [
        ('def banner():\n    return "Welcome to v1\\n"\n', "Welcome to v1", "Goodbye from v9"),
        ('SEPARATOR = "\\t|\\t"\n', "|", ";"),
        ('def f(b):\n    return f"a {b} c\\n"\n', "a {b}", "z {b}"),
    ],
)
def test_the_text_of_a_python_string_with_an_escape_is_a_token(text, old, new):
    """A Python string holding an escape sequence has the escapes as the only children of
    its content: its text is read between them (a banner's words changed read fresh)."""
    name = "banner" if "banner" in text else "f" if "def f" in text else "SEPARATOR"
    assert changed("python", text, text.replace(old, new), name)[1] is True
    assert file_digest("python", text) != file_digest("python", text.replace(old, new))


def test_a_cfg_attr_naming_doc_only_in_its_condition_is_an_attribute():
    """`#[cfg_attr(any(test, doc), derive(Default))]` names `doc` in its condition only:
    it derives, so a change to it is a signature change (not a doc edit)."""
    text = (
        "#[cfg_attr(any(test, doc), derive(Default))]\npub struct ConfigStore {\n    a: u32,\n}\n"
    )
    assert changed("rust", text, text.replace("Default", "Clone"), "ConfigStore") == (True, True)
    quoted = text.replace("any(test, doc)", 'feature = "a,doc"')
    assert changed("rust", quoted, quoted.replace("Default", "Clone"), "ConfigStore") == (
        True,
        True,
    )
