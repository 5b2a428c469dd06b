"""Anchors: tokens, cited paths across roots, bare and CamelCase names (SPEC.md §Anchors)."""

from __future__ import annotations

import os

import pytest

from brainmigrate.anchors import Resolver
from brainmigrate.codeindex import CodeIndex
from brainmigrate.model import Segment
from brainmigrate.paths import PathResolver
from brainmigrate.read.facts import TaskIds, build_fact
from brainmigrate.read.lines import Line
from brainmigrate.read.tokens import camelcase_names, path_like, tokens
from brainmigrate.roots import Root, normalize


def toks(text):
    return [(t.text, t.col, t.lines) for t in tokens([Segment(1, 1, text)])]


def test_token_stripping_and_link_targets():
    assert toks('(a/b.kt), `c/d.py`; "e/f.md" <g/h.c>. Foo.save() [x](i/j.go)') == [
        ("a/b.kt", 2, None),
        ("c/d.py", 12, None),
        ("e/f.md", 22, None),
        ("g/h.c", 31, None),
        ("Foo.save", 39, None),
        ("x", 51, None),
        ("i/j.go", 54, None),
    ]


@pytest.mark.parametrize(
    "token, text, lines",
    [
        ("a/B.kt:88", "a/B.kt", (88, 88)),
        ("a/B.kt:88-92", "a/B.kt", (88, 92)),
        ("a/B.kt:88:5", "a/B.kt", (88, 88)),
        ("a/B.kt:88-92,100-104", "a/B.kt", (88, 104)),
        ("a/B.kt#L88", "a/B.kt", (88, 88)),
        ("a/B.kt#L88-L92", "a/B.kt", (88, 92)),
        ("a/B.kt:88.", "a/B.kt", (88, 88)),
        ("a/B.kt:", "a/B.kt", None),
        ("C:/x/B.kt", "C:/x/B.kt", None),
        ("a/B.kt:x", "a/B.kt", None),  # a declaration after its file (README)
    ],
)
def test_line_forms(token, text, lines):
    assert toks(token) == [(text, 1, lines)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("app/src/Foo.kt", "app/src/Foo.kt"),
        ("app\\src\\Foo.kt", "app/src/Foo.kt"),
        ("docker/Dockerfile", "docker/Dockerfile"),
        ("a/LICENSE", "a/LICENSE"),
        ("Foo.kt", None),
        ("https://x.org/a.html", None),
        ("www.x.org/a.html", None),
        ("git@github.com:o/r.git", None),
        ("src/*.kt", None),
        ("${HOME}/a.kt", None),
        ("and/or", None),
        ("origin/main", None),
        ("text/html", None),
        ("11/29/2026", None),
        ("v1.2/v1.3", None),
        ("a/b.", None),
        ("a/b.9z", None),
    ],
)
def test_path_like(text, expected):
    assert path_like(text) == expected


def test_normalize():
    assert normalize("./a/./b//c.kt") == "a/b/c.kt"
    assert normalize("a/x/../c.kt") == "a/c.kt"
    assert normalize("../c.kt") is None
    assert normalize("/a/../../c.kt") == "/c.kt"


@pytest.fixture
def two_roots(tmp_path):
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "outside"
    for d in (a / "src", b / "src", out):
        d.mkdir(parents=True)
    (a / "src" / "Foo.kt").write_text("class Foo\n")
    (b / "src" / "Foo.kt").write_text("class Foo2\n")
    (b / "src" / "Bar.kt").write_text("class Bar\n")
    (out / "secret.kt").write_text("secret\n")
    return a, b, out


def test_roots_in_order_absolute_and_outside(two_roots):
    a, b, out = two_roots
    (a / "link.kt").symlink_to(out / "secret.kt")
    (a / "ldir").symlink_to(out)
    (a / "loop.kt").symlink_to(a / "loop.kt")
    os.mkfifo(a / "fifo.kt")
    (a / "dev.kt").symlink_to("/dev/zero")
    r = PathResolver([Root.of(0, a), Root.of(1, b)])
    assert r.lookup("src/Foo.kt") == ("found", 0, "src/Foo.kt")
    assert r.lookup("src/Bar.kt") == ("found", 1, "src/Bar.kt")
    assert r.lookup(f"{b}/src/Foo.kt") == ("found", 1, "src/Foo.kt")
    assert r.lookup(f"{b}/src/Gone.kt") == ("gone",)
    assert r.lookup(f"{out}/secret.kt") == ("outside", "absolute path under no root")
    assert r.lookup("../outside/secret.kt") == ("outside", "'..' climbs above the root")
    assert r.lookup("link.kt") == ("outside", "a symlink points out of the root")
    assert r.lookup("ldir/secret.kt") == ("outside", "a symlink points out of the root")
    assert r.lookup("loop.kt") == ("gone",)
    assert r.lookup("fifo.kt") == ("gone",)
    assert r.lookup("dev.kt") == ("outside", "a symlink points out of the root")
    assert r.lookup("src") == ("found", 0, "src")  # a folder the root holds
    assert r.lookup("C:/x.kt")[0] == "outside"
    assert r.lookup("//host/x.kt")[0] == "outside"


def test_root_that_is_a_symlink_and_home_paths(two_roots, tmp_path, monkeypatch):
    a, _, _ = two_roots
    (tmp_path / "alias").symlink_to(a)
    r = PathResolver([Root.of(0, tmp_path / "alias")])
    assert r.lookup("src/Foo.kt") == ("found", 0, "src/Foo.kt")
    assert r.lookup(f"{tmp_path}/alias/src/Foo.kt") == ("found", 0, "src/Foo.kt")
    assert r.lookup(f"{a}/src/Foo.kt") == ("found", 0, "src/Foo.kt")
    monkeypatch.setenv("HOME", str(a))
    assert r.lookup("~/src/Foo.kt") == ("found", 0, "src/Foo.kt")


def test_nfc_and_percent(tmp_path):
    (tmp_path / "Cafe\u0301.kt").write_text("x")  # an NFD name on disk
    (tmp_path / "my file.kt").write_text("x")
    r = PathResolver([Root.of(0, tmp_path)])
    assert r.lookup("./Caf\u00e9.kt") == ("found", 0, "Cafe\u0301.kt")
    assert r.lookup("./my%20file.kt") == ("found", 0, "my file.kt")


@pytest.mark.parametrize(
    "token, names",
    [
        ("PaymentGateway", ["PaymentGateway"]),
        ("HTTPAdapter", ["HTTPAdapter"]),
        ("PaymentGateway.charge", ["PaymentGateway"]),
        ("com.example.PaymentGateway", ["PaymentGateway"]),
        ("Foo.save", []),
        ("Docker", []),
        ("UTC", []),
        ("paymentGateway", []),
        ("Foo2Bar", ["Foo2Bar"]),
        ("Outer.InnerThing.method", ["InnerThing"]),
        # identifiers of any script, by the same rule (SPEC.md §Anchors 3: "an identifier")
        ("\u00dcberGateway", ["\u00dcberGateway"]),
        ("\u00c4nderungsLog.write", ["\u00c4nderungsLog"]),
        (
            "\u041b\u0435\u0434\u0433\u0435\u0440Repository",
            ["\u041b\u0435\u0434\u0433\u0435\u0440Repository"],
        ),
        ("Map<String,\u00dcberRow>", ["\u00dcberRow"]),
        ("U\u0308berGateway", ["\u00dcberGateway"]),  # NFD as typed on macOS: the NFC name
        ("\u00dcber", []),
        ("\u00dcBER", []),
        ("Stra\u00dfe", []),
        ("\u0394elta", []),
        ("\u00dcber\u4e2d\u6587", []),  # letters without case never start a word
        ("Foo$Bar", []),
        ("\u01c5emalHandler", ["\u01c5emalHandler"]),  # a titlecase letter starts a word
    ],
)
def test_camelcase_names(token, names):
    assert camelcase_names(token) == names


def test_a_file_and_its_symlink_alias_declare_a_name_once(tmp_path):
    """``pg_alias.py -> pg.py``: one file under two paths, so the class is unique, at the
    file itself; a copy (another file) still makes it ambiguous."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "pg.py").write_text("class PaymentGateway:\n    pass\n")
    (root / "src" / "pg_alias.py").symlink_to("pg.py")
    (root / "src" / "chain.py").symlink_to("pg_alias.py")  # a link to a link
    out = resolve(root, "the PaymentGateway retries")
    assert [(a.path, a.symbol, a.lines) for a in out.anchors] == [
        ("src/pg.py", "PaymentGateway", (1, 2))
    ]
    assert out.citations == []
    (root / "lib").mkdir()
    (root / "lib" / "copy.py").write_text("class PaymentGateway:\n    pass\n")
    (root / "lib" / "copy_alias.py").symlink_to("copy.py")
    out = resolve(root, "the PaymentGateway retries")
    assert out.anchors == []
    assert [(c.state, c.candidates) for c in out.citations] == [
        ("ambiguous", ("lib/copy.py", "src/pg.py"))
    ]


def test_names_of_any_script_are_looked_up(tmp_path):
    """A fact naming ``\u00dcberGateway`` gets the symbol anchor a Go file declares, as an
    ASCII name would; the token is found inside a sentence and in NFD form."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "uber.go").write_text(
        "package pkg\n\ntype \u00dcberGateway struct {\n\tX int\n}\n\nfunc \u00c4nderungsLog() {}\n"
    )
    out = resolve(root, "the \u00dcberGateway retries; \u00c4nderungsLog is written")
    assert [(a.kind, a.path, a.symbol, a.lines) for a in out.anchors] == [
        ("symbol", "pkg/uber.go", "\u00dcberGateway", (3, 5)),
        ("symbol", "pkg/uber.go", "\u00c4nderungsLog", (7, 7)),
    ]
    nfd = resolve(root, "the U\u0308berGateway retries")
    assert [a.symbol for a in nfd.anchors] == ["\u00dcberGateway"]


def resolve(root, *texts):
    lines = [Line(1, "fact", marker="+", text=" " + texts[0], col=2)]
    lines += [Line(i + 2, "continuation", text=t) for i, t in enumerate(texts[1:])]
    f = build_fact("n.md", lines, "area:n", "environment", TaskIds(), [])
    res = Resolver([Root.of(0, root)], lambda: CodeIndex(root, cache_dir=root / ".cache"))
    out = res.scan(f)
    res.finish()
    return res.complete(out)


@pytest.fixture
def checkout(tmp_path):
    src = tmp_path / "repo"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    (src / "a" / "Gateway.kt").write_text("class PaymentGateway {\n  fun charge() {}\n}\n")
    (src / "a" / "Util.kt").write_text("fun makeThing() {}\nfun TwoWords() {}\n")
    (src / "b" / "Util.kt").write_text("class Other\n")
    (src / "b" / "Thing.py").write_text("def TwoWords():\n    pass\nclass LedgerRepo:\n    pass\n")
    (src / "a" / "Types.kt").write_text("class LedgerRepo\n")
    (src / "a" / "Fn.kt").write_text("fun LedgerRepo() = 1\n")
    for i in range(8):
        (src / "a" / f"File{i}.kt").write_text(f"class ThingNumber{i}\n")
    return src


def test_bare_names_unique_ambiguous_and_not_a_file(checkout):
    out = resolve(checkout, "Gateway.kt:2 and Util.kt and PaymentGateway.charge and Nope.kt")
    assert [(a.kind, a.path, a.symbol, a.lines, a.how) for a in out.anchors] == [
        ("file", "a/Gateway.kt", None, (2, 2), "bare-name"),
        ("symbol", "a/Gateway.kt", "PaymentGateway", (1, 3), "camelcase"),
    ]
    assert [(c.state, c.name, c.candidates) for c in out.citations] == [
        ("ambiguous", "Util.kt", ("a/Util.kt", "b/Util.kt"))
    ]


def test_types_before_functions_and_ambiguity(checkout):
    # LedgerRepo: a type in two files (Types.kt, Thing.py) -> ambiguous, the function in
    # Fn.kt does not count; TwoWords: functions only, in two files -> ambiguous.
    out = resolve(checkout, "LedgerRepo and TwoWords and UnknownName")
    assert out.anchors == []
    assert [(c.name, c.how, c.candidates) for c in out.citations] == [
        ("LedgerRepo", "camelcase", ("a/Types.kt", "b/Thing.py")),
        ("TwoWords", "camelcase", ("a/Util.kt", "b/Thing.py")),
    ]


def test_caps_of_six_with_a_note(checkout):
    names = " ".join(f"ThingNumber{i}" for i in range(8))
    files = " ".join(f"File{i}.kt" for i in range(8))
    out = resolve(checkout, names, files)
    assert [a.symbol for a in out.anchors if a.how == "camelcase"] == [
        f"ThingNumber{i}" for i in range(6)
    ]
    assert [a.path for a in out.anchors if a.how == "bare-name"] == [
        f"a/File{i}.kt" for i in range(6)
    ]
    assert sorted(out.notes) == [(2, "CamelCase names"), (2, "bare file names")]


def test_paths_and_file_names_are_not_scanned_for_names(checkout):
    out = resolve(checkout, "a/PaymentGateway.kt Gateway.kt")
    assert [a.symbol for a in out.anchors] == [None]
    assert [c.name for c in out.citations] == ["a/PaymentGateway.kt"]


def test_no_index_is_made_without_names(tmp_path):
    made = []
    res = Resolver([Root.of(0, tmp_path)], lambda: made.append(1))
    lines = [Line(1, "fact", marker="+", text=" plain words only", col=2)]
    f = build_fact("n.md", lines, "area:n", "environment", TaskIds(), [])
    res.scan(f)
    res.finish()
    assert made == []
