"""Every file and folder of a real tree, written in the ways people write them, is that
path: first at the token layer, then anchored by the resolver, gone once deleted in git
(SPEC.md §Anchors, the token paragraph, "Line forms", 1 and 2; issue 22's property test).

**Token layer.** The tree is this repository's own ``brainmigrate/`` and ``tests/`` folders,
copied into ``tmp_path``, plus extensionless scripts (``bin/dev``, ``.husky/pre-push``),
listed file names (``Makefile``, ``docker/Dockerfile``) and nested folders. Each file is
written in 31 forms and each folder in 25 (a trailing ``/``); the assertion is on tokens
only: the one token that is a cited path (``cited_path``, or ``cited_link`` for a link
target) has the path's text, its line form and its kind (``"file"``, ``"folder"``, or
``"maybe"`` for an extensionless script). Forms whose last step is the resolver's (absolute
and ``file:`` paths, ``../../PATH``, blob URLs, references) are asserted at the token layer
only here, and at the resolver below.

A path holding whitespace is written only in the forms that keep spaces (angle-bracket
links, wiki links, HTML attributes, references, backtick spans a root holds).

**Resolver.** One git work tree, ``repo``, holds two real trees: this repository's
``brainmigrate/`` and ``tests/``, and three packages of the venv's site-packages
(``click``, ``jinja2``, ``hypothesis``); its remote ``origin`` is
``https://github.com/acme/shop.git``. Of its tracked files (no symlink, no whitespace)
every k-th is sampled, about 150 (185 today: 20 Markdown files, 18 test files), and of the
folders holding them about 40 (36 today, the four at the top among them). Each file is
written in 72 forms (71 for a file that is no test, so no ``::node``; no line forms for an
empty file), each folder in 38 (36 at the top, where a word without ``/`` is no path):
brain notation facts in ``notes/brain.md`` and Markdown notes (list items, task boxes,
ordered items, table rows, blockquotes, paragraphs) in ``notes/CLAUDE.md`` beside the
checkout, and ``../../PATH``, ``[x](../../PATH)`` and plain paths in
``repo/docs/notes/nested.md``. The forms: backticks, Markdown links (also ``<…>`` targets,
titles, images, line forms, the path as its own label), ``mdc:`` links, ``@path``,
``<path>``, straight and curly quotes, ``**bold**``, ``'s`` and ``’s``, ``→`` and ``->``
between two paths, CJK glue (letters, quotes, brackets, ``「」``), HTML ``href``/``src``,
``:12``, ``:12:5``, ``:3-9``, ``:3–9``, ``:3—9``, ``:3-9,3-9``, ``#L3-L9``, ``#L3-9``,
``#L3C1-L9C2``, a JVM stack frame, ``#fragment`` (a real heading of a Markdown file),
``::node``, ``?plain=1``, ``…``, ``()``, wiki links, reference-style links with their
definition, own-repo ``blob``/``tree``/raw URLs (any case, any ref), absolute checkout
paths, ``file://`` URLs, ``./PATH``, ``D:\\dev\\repo\\PATH`` (the checkout's folder name)
and ``D:\\work\\shop\\PATH`` (its remote's repository name). One ``read_notes`` call
resolves the facts (14425 today, 14831 citations); each is asserted to be exactly the
anchors it was written for (kind, path, lines) with no citation, and ``check`` to find
nothing. Then the sampled files and every third sampled folder below the top are deleted
and the deletion committed: the same notes give each citation of a file or folder no
longer held as gone (BM101, 14636 today, under the name as written) and every other one
still anchored, nothing else. A hundred and six phrases that are no paths
(``tests/test_not_paths.py``), each plain and backticked, against the same checkout give no
anchor and no error. The whole file runs in about 5 s.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import click
import pytest
from test_not_paths import MAYBE, NONE, SPEC_FILES

from brainmigrate import importer
from brainmigrate.check import run_check
from brainmigrate.model import Segment
from brainmigrate.read.cited import cited_link, cited_path
from brainmigrate.read.links import repo_url_parts
from brainmigrate.read.notation import WS_CHARS
from brainmigrate.read.run import ImportOptions
from brainmigrate.read.tokens import Token, tokens

REPO = Path(__file__).resolve().parents[1]
EXTRA = {
    "bin/dev": "#!/bin/sh\n",
    "bin/seed-demo": "#!/bin/sh\n",
    ".husky/pre-push": "#!/bin/sh\n",
    "scripts/ci/run": "#!/bin/sh\n",
    "Makefile": "all:\n",
    "docker/Dockerfile": "FROM scratch\n",
    "docs/adr/nested/deep/0001-use-sqlite.md": "# Use SQLite\n",
    "apps/web/src/lib/navigation.ts": "export {}\n",
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """``(root, files, folders)``: the copied tree and its root-relative POSIX paths."""
    root = tmp_path_factory.mktemp("forms") / "shelf"
    for name in ("brainmigrate", "tests"):
        shutil.copytree(
            REPO / name,
            root / name,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            symlinks=True,
        )
    for rel, text in EXTRA.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    files, folders = [], []
    for top, _dirs, names in os.walk(root):
        rel_top = Path(top).relative_to(root).as_posix()
        prefix = "" if rel_top == "." else rel_top + "/"
        if prefix:
            folders.append(prefix.rstrip("/"))
        files.extend(prefix + n for n in names if not (Path(top) / n).is_symlink())
    return root, sorted(files), sorted(folders)


def kind_of(rel: str) -> str:
    cited = cited_path("x/" + rel)  # the kind by the last segment's shape
    return cited[1]


_SPACE = re.compile(f"[{WS_CHARS}]")


def spaced(rel: str) -> bool:
    return _SPACE.search(rel) is not None


#: name -> (fact text for PATH, the token text expected, its lines); ``{p}`` is the path.
FILE_FORMS = {
    "plain": ("see {p} for it", "{p}", None),
    "backticks": ("see `{p}` for it", "{p}", None),
    "link": ("see [the file]({p}) for it", "{p}", None),
    "angle-link": ("see [the file](<{p}>) for it", "{p}", None),
    "mdc-link": ("see [the file](mdc:{p})", "{p}", None),
    "mdc-bare": ("see mdc:{p}", "{p}", None),
    "at-import": ("@{p}", "{p}", None),
    "angle-brackets": ("see <{p}>.", "{p}", None),
    "double-quotes": ('see "{p}".', "{p}", None),
    "single-quotes": ("see '{p}',", "{p}", None),
    "curly-quotes": ("see \u201c{p}\u201d;", "{p}", None),
    "bold": ("see **{p}**!", "{p}", None),
    "possessive": ("{p}'s rules", "{p}", None),
    "curly-possessive": ("{p}\u2019s rules", "{p}", None),
    "arrow": ("old.kt\u2192{p}", "{p}", None),
    "ascii-arrow": ("old.kt->{p}", "{p}", None),
    "cjk-quote-glue": ("\u89c1\u201c{p}\u201d\u548c", "{p}", None),
    "cjk-glue": ("\u89c1{p}\u3002", "{p}", None),
    "html-href": ('<a href="{p}">the file</a>', "{p}", None),
    "html-src": ("<img src='{p}' alt=x>", "{p}", None),
    "line-range": ("see {p}:12-40.", "{p}", (12, 40)),
    "en-dash-range": ("see {p}:12\u201340.", "{p}", (12, 40)),
    "github-lines": ("see {p}#L3-L9", "{p}", (3, 9)),
    "parens": ("(see {p})", "{p}", None),
    "wiki": ("see [[{p}|the file]]", "{p}", None),
    "reference": ("see [the file][src]", "{p}", None),
    "nested-notes": ("see ../../{p}", "../../{p}", None),
    "absolute": ("see {root}/{p}:7", "{root}/{p}", (7, 7)),
    "file-url": ("see file://{root}/{p}", "{root}/{p}", None),
    "blob-url": ("see https://github.com/acme/shelf/blob/main/{p}#L10-L20", None, (10, 20)),
    "query": ("see {p}?plain=1", "{p}", None),
}
#: Forms that keep a path's spaces.
SPACED_FORMS = {"angle-link", "html-href", "html-src", "wiki", "reference"}
#: A suffix is dropped only after an extension or a listed file name (SPEC.md §Anchors).
SUFFIX_FORMS = {"query"}
#: Forms that cite a name without "/" (a link target): a bare file name (``Makefile``) in
#: any other form is a file name, looked up by name, no cited path.
LINK_FORMS = {"link", "angle-link", "mdc-link", "mdc-bare", "html-href", "html-src", "reference"}
#: Forms that are no folder citation (a line form, a suffix after an extension).
FOLDER_SKIP = {"line-range", "en-dash-range", "github-lines", "absolute", "query", "blob-url"}


def cited(tok: Token):
    return cited_link(tok.text) if tok.link else cited_path(tok.text)


def read(text: str, references=None, holds=None) -> list[Token]:
    return [
        t
        for t in tokens([Segment(1, 1, text)], holds=holds, references=references)
        if t.url or cited(t) is not None
    ]


def written(form: str, rel: str, root: Path):
    text, expect, lines = FILE_FORMS[form]
    fill = {"p": rel, "root": root.as_posix()}
    return text.format(**fill), expect.format(**fill) if expect else None, lines


def check(form: str, rel: str, root: Path, kind: str) -> None:
    text, expect, lines = written(form, rel, root)
    refs = {"src": rel}
    got = read(text, references=refs)
    if form == "blob-url":
        [tok] = got
        assert tok.url and tok.lines == lines, (form, text, tok)
        assert repo_url_parts(tok.text).path == rel, (form, text, tok)
        return
    assert [(t.text, t.lines) for t in got] == [(expect, lines)], (form, text, got)
    [tok] = got
    want = "file" if tok.link and kind == "maybe" and "/" not in rel else kind
    if form not in ("absolute", "file-url", "nested-notes"):
        assert cited(tok)[1] == want, (form, text, cited(tok))
    if form in ("link", "angle-link", "mdc-link", "mdc-bare", "html-href", "html-src"):
        assert tok.link, (form, text)
    if form == "backticks":
        assert tok.tick, (form, text)
    assert tok.at == (form == "at-import"), (form, text)


def test_the_tree_is_big_enough(tree):
    _, files, folders = tree
    assert len(files) >= 150 and len(folders) >= 15
    assert len(FILE_FORMS) >= 25
    assert {"bin/dev", ".husky/pre-push", "tests/golden/root-a/app/src/My File.kt"} <= set(files)


def test_every_file_in_every_form_is_its_path(tree):
    root, files, _ = tree
    failures = []
    count = 0
    for rel in files:
        kind = kind_of(rel)
        for form in FILE_FORMS:
            if spaced(rel) and form not in SPACED_FORMS:
                continue
            if kind == "maybe" and form in SUFFIX_FORMS:
                continue  # bin/dev?plain=1 keeps its query: no extension ends the path
            if form == "cjk-glue" and not rel[0].isalnum():
                continue  # a CJK letter meets an ASCII letter or digit, not a "." or "_"
            if "/" not in rel and form not in LINK_FORMS:
                continue  # a bare file name (Makefile) is no cited path but a file name
            try:
                check(form, rel, root, kind)
                count += 1
            except AssertionError as exc:
                failures.append(str(exc))
    assert failures == []
    assert count >= 25 * (len(files) - 10)


def test_a_file_with_a_fragment_or_a_node_id_is_its_path(tree):
    root, files, _ = tree
    for rel in files:
        if kind_of(rel) != "file" or spaced(rel) or "/" not in rel:
            continue
        for text, fragment in (
            (f"see {rel}#rollback-steps", "rollback-steps"),
            (f"{rel}::T::t", None),
        ):
            got = read(text)
            assert [(t.text, t.fragment) for t in got] == [(rel, fragment)], text


def test_every_folder_in_every_form_is_a_folder_citation(tree):
    root, _, folders = tree
    failures = []
    for rel in folders:
        if spaced(rel):
            continue
        for form in FILE_FORMS:
            if form in FOLDER_SKIP or (form == "cjk-glue" and not rel[0].isalnum()):
                continue
            text, expect, lines = written(form, rel + "/", root)
            got = read(text, references={"src": rel + "/"})
            want = [(expect, None)]
            if [(t.text, t.lines) for t in got] != want or cited(got[0])[1] != "folder":
                failures.append((form, text, got))
    assert failures == []


def test_a_backticked_path_with_spaces_is_one_token_when_a_root_holds_it(tree):
    root, files, _ = tree
    held = set(files)
    for rel in (f for f in files if spaced(f)):
        got = read(f"see `{rel}` now", holds=held.__contains__)
        assert [(t.text, t.tick) for t in got] == [(rel, True)]
        assert [t.text for t in read(f"see `{rel}` now")] != [rel]  # without holds: split


# ------------------------------------------------------------------------------ resolved

SITE = Path(click.__file__).resolve().parent.parent  # the venv's site-packages
PACKAGES = ("click", "jinja2", "hypothesis")
REMOTE = "https://github.com/acme/shop.git"
GIT = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
GIT += ["-c", "init.defaultBranch=main", "-c", "core.quotepath=off"]
#: about this many files and folders are sampled (every k-th, sorted: deterministic)
SAMPLE_FILES, SAMPLE_FOLDERS = 150, 40


def git(cwd, *args) -> str:
    done = subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def line_count(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


_HEADING = re.compile(r"^#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


def first_heading(path: Path) -> str | None:
    """GitHub's slug of the file's first ATX heading outside a fence (None: no heading)."""
    fenced = False
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (m := _HEADING.match(line)):
            return re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
    return None


def first_test(path: Path) -> str | None:
    m = re.search(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.M)
    return m.group(1) if m else None


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """``(base, root, files, folders)``: a git work tree ``base/repo`` holding this
    repository's ``brainmigrate/`` and ``tests/`` and the ``PACKAGES`` of site-packages,
    remote ``origin`` at ``REMOTE``, all committed; ``files`` and ``folders`` the sample,
    root-relative POSIX paths of tracked files (no symlink, no whitespace) and of folders
    holding them (whose last segment has no extension)."""
    base = tmp_path_factory.mktemp("resolved")
    root = base / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for src in (REPO / "brainmigrate", REPO / "tests", *(SITE / p for p in PACKAGES)):
        shutil.copytree(src, root / src.name, ignore=ignore, symlinks=True)
    git(root, "init", "-q")
    git(root, "remote", "add", "origin", REMOTE)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the trees")
    tracked = sorted(git(root, "ls-files", "-z").split("\0")[:-1])
    held = [p for p in tracked if not spaced(p) and not (root / p).is_symlink()]
    folders = sorted({Path(p).parent.as_posix() for p in held} - {"."})
    folders = [f for f in folders if kind_of(f) == "maybe"]
    files = held[:: max(1, len(held) // SAMPLE_FILES)]
    folders = folders[:: max(1, len(folders) // SAMPLE_FOLDERS)]
    return base, root, files, folders


#: ``(name, notes file, fact text, lines)`` for a file: ``{p}`` the path (``{w}`` with
#: ``\\``), ``{q}`` the next sampled file, ``{a}``/``{b}`` lines it holds, ``{f}`` a fragment
#: (a heading of a Markdown file), ``{n}`` a pytest node, ``{r}`` the checkout's absolute
#: path, ``{i}`` a reference label; lines ``"a"`` is ``(a, a)``, ``"ab"`` is ``(a, b)``.
RESOLVED_FILE_FORMS = [
    ("plain", "brain", "see {p} for it", None),
    ("backticks", "brain", "see `{p}` for it", None),
    ("link", "brain", "see [the file]({p}) for it", None),
    ("angle-link", "brain", "see [the file](<{p}>) now", None),
    ("mdc-link", "brain", "see [the file](mdc:{p})", None),
    ("mdc-bare", "brain", "see mdc:{p}", None),
    ("at-import", "brain", "@{p}", None),
    ("angle-brackets", "brain", "see <{p}>.", None),
    ("double-quotes", "brain", 'see "{p}".', None),
    ("single-quotes", "brain", "see '{p}',", None),
    ("curly-quotes", "brain", "see \u201c{p}\u201d;", None),
    ("bold", "brain", "see **{p}**!", None),
    ("possessive", "brain", "{p}'s rules", None),
    ("curly-possessive", "brain", "{p}\u2019s rules", None),
    ("arrow", "brain", "{p}\u2192{q}", None),
    ("ascii-arrow", "brain", "`{p}`->`{q}`", None),
    ("cjk-glue", "brain", "\u89c1{p}\u5904\u7406", None),
    ("cjk-quote-glue", "brain", "\u89c1\u201c{p}\u201d\u548c", None),
    ("html-href", "brain", '<a href="{p}">the file</a>', None),
    ("html-src", "brain", "<img src='{p}' alt=x>", None),
    ("line", "brain", "see {p}:{a}.", "a"),
    ("line-range", "brain", "see {p}:{a}-{b}.", "ab"),
    ("en-dash-range", "brain", "see {p}:{a}\u2013{b}.", "ab"),
    ("github-lines", "brain", "see {p}#L{a}-L{b}", "ab"),
    ("fragment", "brain", "see {p}#{f}", None),
    ("node", "brain", "run {p}::{n} -q", None),
    ("parens", "brain", "(see {p})", None),
    ("wiki", "brain", "see [[{p}|the file]]", None),
    ("reference", "brain", "see [the file][{i}]", None),
    ("query", "brain", "see {p}?plain=1", None),
    ("blob-url", "brain", "https://github.com/acme/shop/blob/main/{p}#L{a}", "a"),
    ("absolute", "brain", "see {r}/{p}:{a}", "a"),
    ("file-url", "brain", "see file://{r}/{p}", None),
    ("windows", "brain", "see D:\\dev\\repo\\{w}", None),
    ("windows-remote-name", "brain", "see D:\\work\\shop\\{w}:{a}-{b}", "ab"),
    ("nested-notes", "nested", "see ../../{p}", None),
    ("nested-link", "nested", "see [the file](../../{p})", None),
    ("nested-plain", "nested", "see `{p}`", None),
    ("brain-ordered", "brain", "1. ! {p} fails", None),
    ("brain-task-box", "brain", "- [x] x moved {p}", None),
    ("claude-at", "claude", "- @{p}", None),
    ("dot-slash", "brain", "see ./{p} now", None),
    ("line-col", "brain", "at {p}:{a}:5 it fails", "a"),
    ("line-ranges", "brain", "see {p}:{a}-{b},{a}-{b}", "ab"),
    ("em-dash-range", "brain", "see {p}:{a}\u2014{b}", "ab"),
    ("github-cols", "brain", "see {p}#L{a}C1-L{b}C2", "ab"),
    ("gitlab-lines", "brain", "see {p}#L{a}-{b}", "ab"),
    ("cjk-bracket-glue", "brain", "\u89c1({p})\u548c", None),
    ("fullwidth-brackets", "brain", "\u89c1\u300c{p}\u300d", None),
    ("ellipsis", "brain", "see {p}\u2026", None),
    ("call", "brain", "see {p}() now", None),
    ("raw-url", "brain", "https://raw.githubusercontent.com/acme/shop/main/{p}", None),
    ("blob-query", "brain", "https://github.com/acme/shop/blob/v1.2/{p}?plain=1#L{a}", "a"),
    ("ssh-less-case", "brain", "https://GitHub.com/Acme/Shop/blob/main/{p}", None),
    ("file-url-windows", "brain", "see file:///D:/dev/repo/{p}", None),
    ("claude-quote", "claude", "> see `{p}`", None),
    ("claude-paragraph", "claude", "The rules live in {p} and apply.", None),
    ("claude-decision", "claude", "- ~ keep {p} small", None),
    ("stack-frame", "brain", "at x.y.Z.run({p}:{a})", "a"),
    ("link-title", "brain", 'see [the file]({p} "the title")', None),
    ("link-lines", "brain", "see [the file]({p}#L{a}-L{b})", "ab"),
    ("link-self", "brain", "see [{p}]({p})", None),
    ("end-period", "brain", "it is in {p}.", None),
    ("end-colon", "brain", "in {p}: the rule", None),
    ("paren-lines", "brain", "(see {p}:{a})", "a"),
    ("tick-lines", "brain", "see `{p}:{a}-{b}`", "ab"),
    ("claude-table", "claude", "| `{p}` | the file |", None),
    ("claude-star", "claude", "* see **`{p}`**", None),
    ("quoted-at", "brain", "read `@{p}` first", None),
    ("image", "brain", "![the file]({p})", None),
    ("claude-item", "claude", "- see `{p}` for it", None),
    ("claude-task", "claude", "1. [ ] fix [the file]({p})", None),
]
#: The same for a folder: ``{p}`` without its trailing ``/``.
RESOLVED_FOLDER_FORMS = [
    ("plain", "brain", "see {p}/ for it"),
    ("no-slash", "brain", "see {p} for it"),  # a folder below the top: a "/" in it
    ("backticks", "brain", "see `{p}/` for it"),
    ("backticks-no-slash", "brain", "see `{p}` for it"),
    ("link", "brain", "see [the folder]({p}/) for it"),
    ("angle-link", "brain", "see [the folder](<{p}/>) now"),
    ("mdc-link", "brain", "see [the folder](mdc:{p}/)"),
    ("at-import", "brain", "@{p}/"),
    ("angle-brackets", "brain", "see <{p}/>."),
    ("double-quotes", "brain", 'see "{p}/".'),
    ("curly-quotes", "brain", "see \u201c{p}/\u201d;"),
    ("bold", "brain", "see **{p}/**!"),
    ("arrow", "brain", "{p}/\u2192{q}/"),
    ("cjk-glue", "brain", "\u89c1{p}/\u3002"),
    ("cjk-letter-glue", "brain", "\u89c1{p}\u76ee\u5f55"),
    ("html-href", "brain", '<a href="{p}/">the folder</a>'),
    ("parens", "brain", "(see {p}/)"),
    ("wiki", "brain", "see [[{p}/|the folder]]"),
    ("reference", "brain", "see [the folder][{i}]"),
    ("tree-url", "brain", "https://github.com/acme/shop/tree/main/{p}"),
    ("absolute", "brain", "see {r}/{p}/"),
    ("windows", "brain", "see D:\\dev\\repo\\{w}\\"),
    ("nested-notes", "nested", "see ../../{p}/"),
    ("claude-item", "claude", "- the `{p}/` folder"),
    ("claude-task", "claude", "- [ ] tidy {p}/"),
    ("claude-link", "claude", "1. see [the folder]({p}/)"),
    ("dot-slash", "brain", "see ./{p}/ now"),
    ("single-quotes", "brain", "see '{p}/',"),
    ("mdc-bare", "brain", "see mdc:{p}/"),
    ("html-href-bare", "brain", "<a href={p}/>the folder</a>"),
    ("tree-url-slash", "brain", "https://github.com/acme/shop/tree/main/{p}/"),
    ("file-url", "brain", "see file://{r}/{p}/"),
    ("windows-remote-name", "brain", "see D:\\work\\shop\\{w}\\"),
    ("nested-link", "nested", "see [the folder](../../{p}/)"),
    ("nested-plain", "nested", "see `{p}/`"),
    ("brain-ordered", "brain", "1. ! {p}/ is slow"),
    ("claude-quote", "claude", "> all of `{p}/`"),
    ("claude-paragraph", "claude", "Helpers live in {p}/ today."),
]
#: The folder forms that write a folder with its trailing "/", which its gone name keeps.
SLASHED = frozenset(f for f, _, t in RESOLVED_FOLDER_FORMS if "{p}/" in t or "{w}\\" in t) | {
    "reference"  # its definition's target is written "{p}/"
}
NOTES_FILES = {"brain": "notes/brain.md", "claude": "notes/CLAUDE.md", "nested": None}


class Written:
    """The notes a checkout's sample is written in: per notes file its lines, and per
    ``(notes file, line)`` the form, the path and the ``(kind, path, lines)`` it cites."""

    def __init__(self, base: Path, root: Path, files: list[str], folders: list[str]):
        self.paths = {k: base / v for k, v in NOTES_FILES.items() if v}
        self.paths["nested"] = root / "docs/notes/nested.md"
        self.lines = {k: [] for k in self.paths}
        self.refs: list[str] = []
        self.cites: dict[tuple[str, int], tuple[str, str, list[tuple]]] = {}
        for n, rel in enumerate(files):
            self.file(root, rel, files[(n + 1) % len(files)])
        for n, rel in enumerate(folders):
            self.folder(root, rel, folders[(n + 1) % len(folders)])
        self.lines["brain"] += ["", *self.refs]
        for key, path in self.paths.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(self.lines[key]) + "\n", encoding="utf-8")

    def add(self, where: str, text: str, form: str, rel: str, targets: list[tuple]) -> None:
        if where == "claude" and self.lines[where]:
            self.lines[where].append("")  # a paragraph or list of its own
        row = text if where == "claude" or text.startswith(("1. ", "- [")) else "+ " + text
        self.lines[where].append(row)
        self.cites[(where, len(self.lines[where]))] = (form, rel, targets)

    def label(self, target: str) -> str:
        self.refs.append(f"[ref-{len(self.refs)}]: {target}")
        return f"ref-{len(self.refs) - 1}"

    def file(self, root: Path, rel: str, nxt: str) -> None:
        n = line_count(root / rel)
        a, b = min(3, n), min(9, n)
        md = rel.endswith((".md", ".markdown", ".mdx"))
        frag = first_heading(root / rel) if md else "usage"
        node = first_test(root / rel) if re.search(r"/test_\w+\.py$", rel) else None
        for form, where, text, lines in RESOLVED_FILE_FORMS:
            if (lines and not n) or (form == "fragment" and not frag):
                continue  # no line of an empty file; no heading to name
            if form == "node" and not node:
                continue  # a pytest node id is written after a test file
            fill = dict(p=rel, q=nxt, w=rel.replace("/", "\\"), a=a, b=b, f=frag, n=node)
            fill.update(r=root.as_posix(), i=self.label(rel) if form == "reference" else "")
            span = None if lines is None else (a, a) if lines == "a" else (a, b)
            targets = [("file", rel, span)]
            if "{q}" in text:
                targets.append(("file", nxt, None))
            if text.count("{p}") == 2 and form != "link-self":
                targets.append(targets[0])  # one anchor; gone at each place it is written
            # [p](p): the label shows its target and is no second citation
            self.add(where, text.format(**fill), form, rel, targets)

    def folder(self, root: Path, rel: str, nxt: str) -> None:
        for form, where, text in RESOLVED_FOLDER_FORMS:
            if form in ("no-slash", "cjk-letter-glue") and "/" not in rel:
                continue  # a word without "/" is no path (the backticked name is)
            fill = dict(p=rel, q=nxt, w=rel.replace("/", "\\"), r=root.as_posix())
            fill["i"] = self.label(rel + "/") if form == "reference" else ""
            targets = [("folder", rel, None)]
            if "{q}" in text:
                targets.append(("folder", nxt, None))
            self.add(where, text.format(**fill), "folder " + form, rel, targets)


def resolved(written: Written, root: Path, base: Path):
    """Per ``(notes file, line)``: ``(anchors, citations)`` as ``read_notes`` gives them,
    anchors as ``(kind, path, lines)`` and citations as ``(state, name)``; and the
    ``check`` findings as ``(notes file, line, code, severity, subject)``."""
    options = ImportOptions(roots=[str(root)], cache_dir=base / "cache")
    paths = [str(p) for p in written.paths.values()]
    where = {str(p): k for k, p in written.paths.items()}
    notes = importer.read_notes(paths, options)
    got = {}
    for fact, res in notes.facts:
        anchors = [(a.kind, a.path, a.lines) for a in res.anchors]
        got[(where[fact.file], fact.line)] = (anchors, [(c.state, c.name) for c in res.citations])
    found = run_check(paths, options)
    findings = [(where[f.file], f.line, f.code, f.severity, f.subject) for f in found.findings]
    return got, findings


#: The name a gone citation keeps, by form (default: the path, ``{p}``).
GONE_AS = {
    "absolute": "{r}/{p}",
    "file-url": "{r}/{p}",
    "windows": "D:/dev/repo/{p}",
    "windows-remote-name": "D:/work/shop/{p}",
    "file-url-windows": "D:/dev/repo/{p}",
    "nested-notes": "../../{p}",
    "nested-link": "../../{p}",
    "folder absolute": "{r}/{p}",
    "folder windows": "D:/dev/repo/{p}",
    "folder nested-notes": "../../{p}/",
    "folder nested-link": "../../{p}/",
    "folder file-url": "{r}/{p}",
    "folder windows-remote-name": "D:/work/shop/{p}",
}


def phrases_notes(base: Path) -> Path:
    """Each phrase of tests/test_not_paths.py as a fact of its own, plain and backticked."""
    rows = [f"+ see {x} here" for x in (*MAYBE, *NONE, *SPEC_FILES.split())]
    rows += [f"+ use `{x}` here" for x in (*MAYBE, *NONE, *SPEC_FILES.split())]
    path = base / "notes" / "phrases.md"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(checkout):
    """The sample's notes read against the checkout as committed, then again after the
    sampled files and every third sampled folder below the top are deleted and the
    deletion committed: ``(written, before, after, gone, phrases)``, ``before`` and
    ``after`` as ``resolved`` gives them, ``gone`` the sampled paths no longer held,
    ``phrases`` ``(what read_notes gives per fact, check's findings)`` of the phrases."""
    base, root, files, folders = checkout
    written = Written(base, root, files, folders)
    before = resolved(written, root, base)
    notes = phrases_notes(base)
    options = ImportOptions(roots=[str(root)], cache_dir=base / "cache")
    facts = [
        (f.line, r.anchors, [(c.state, c.name) for c in r.citations])
        for f, r in importer.read_notes([str(notes)], options).facts
    ]
    phrases = (facts, run_check([str(notes)], options).findings)
    for n in range(0, len(files), 100):
        git(root, "rm", "-q", "--", *files[n : n + 100])
    deleted = [f for f in folders if "/" in f][::3]
    git(root, "rm", "-q", "-r", "--ignore-unmatch", "--", *deleted)
    git(root, "commit", "-qm", "the sampled files and some folders are deleted")
    after = resolved(written, root, base)
    gone = {p for p in (*files, *folders) if not (root / p).exists()}
    return written, before, after, gone, phrases


def test_the_sample_is_big_enough(checkout, runs):
    base, root, files, folders = checkout
    written = runs[0]
    assert len(files) >= 140 and len(folders) >= 35
    assert len(RESOLVED_FILE_FORMS) >= 25 and len(RESOLVED_FOLDER_FORMS) >= 25
    assert {p.split("/")[0] for p in files} == {"brainmigrate", "tests", *PACKAGES}
    used = Counter(form for form, _, _ in written.cites.values())
    assert min(used.values()) >= 5, used  # every form is written for many paths
    assert len(used) == len(RESOLVED_FILE_FORMS) + len(RESOLVED_FOLDER_FORMS)
    assert len(written.cites) >= 25 * len(files) + 20 * len(folders)


def test_every_sampled_file_and_folder_in_every_form_is_anchored_at_it(runs):
    """Each fact holds exactly the anchors it was written for (kind, path, lines), no
    citation, and ``check`` says nothing at all."""
    written, (got, findings), _, _, _ = runs
    failures = [
        (form, written.lines[key[0]][key[1] - 1], got.get(key))
        for key, (form, _, targets) in written.cites.items()
        if got.get(key) != (list(dict.fromkeys(targets)), [])
    ]
    assert failures == []
    assert findings == []


def test_after_the_deletion_the_same_notes_cite_them_as_gone(checkout, runs):
    """The sampled files, the deleted folders and the folders left empty are gone (BM101,
    under the name as written); every other citation still anchors; nothing else is gone."""
    base, root, files, folders = checkout
    written, _, (got, findings), gone, _ = runs
    assert set(files) <= gone
    assert 5 <= len(gone & set(folders)) < len(folders) - 5  # some folders stay
    failures, expected = [], []
    for key, (form, _rel, targets) in written.cites.items():
        held = list(dict.fromkeys(t for t in targets if t[1] not in gone))
        names = [
            GONE_AS.get(form, "{p}").format(p=t[1], r=root.as_posix()) if n == 0 else t[1]
            for n, t in enumerate(targets)
            if t[1] in gone
        ]
        if form.startswith("folder ") and form[7:] in SLASHED:  # a folder written with "/"
            names = [n if n.endswith("/") else n + "/" for n in names]
        want = (held, [("gone", name) for name in names])
        if got.get(key) != want:
            failures.append((form, written.lines[key[0]][key[1] - 1], got.get(key), want))
        expected += [(key[0], key[1], "BM101", "error", name) for name in names]
    assert failures == []
    assert sorted(findings) == sorted(expected)
    assert len(expected) >= 25 * len(files)


def test_a_hundred_phrases_that_are_no_paths_give_no_error(runs):
    """Against the same checkout: no phrase anchors or is gone; only the shapes SPEC.md
    §Anchors 1 names as cited paths are unresolved (a warning, never an error)."""
    facts, findings = runs[4]
    phrases = [*MAYBE, *NONE, *SPEC_FILES.split()]
    assert len(phrases) >= 100 and len(facts) == 2 * len(phrases)
    assert [(line, anchors) for line, anchors, _ in facts if anchors] == []
    cited = [("unresolved", p) for p in SPEC_FILES.split()]
    assert [c for _, _, c in facts if c] == [[c] for c in cited * 2]
    codes = [("BM103", "warning", p) for p in SPEC_FILES.split()]
    assert [(f.code, f.severity, f.subject) for f in findings] == codes * 2
