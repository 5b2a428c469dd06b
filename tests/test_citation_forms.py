"""Every file and folder of a real tree, written in the ways people write them, is read by
the token layer as that path (SPEC.md §Anchors, the token paragraph, "Line forms", 1).

The tree is this repository's own ``brainmigrate/`` and ``tests/`` folders, copied into
``tmp_path``, plus extensionless scripts (``bin/dev``, ``.husky/pre-push``), listed file
names (``Makefile``, ``docker/Dockerfile``) and nested folders. Each file is written in 31
forms and each folder in 25 (a trailing ``/``); the assertion is on tokens only: the one
token that is a cited path (``cited_path``, or ``cited_link`` for a link target) has the
path's text, its line form and its kind (``"file"``, ``"folder"``, or ``"maybe"`` for an
extensionless script).

Forms whose last step is the resolver's, asserted here at the token layer only (the
resolver-level assertions, anchored and gone, are added where resolution is tested):

* ``absolute`` and ``file-url``: the token is the absolute checkout path; the resolver
  reads it under the root it lies in;
* ``nested-notes``: the token is ``../../PATH``; the resolver reads it relative to a notes
  file two folders down;
* ``blob-url``: the token is a URL (``url=True``) whose ``repo_url_parts`` path is PATH;
  the resolver matches the host, owner and repository against the root's remote;
* ``backtick-spaces`` (paths holding a space): one token only when ``holds`` says a root
  holds it; here ``holds`` is the tree's own set of files;
* ``reference``: the definition's target comes from the notes file's link reference
  definitions, passed as ``references=``.

A path holding whitespace is written only in the forms that keep spaces (angle-bracket
links, wiki links, HTML attributes, references, backtick spans a root holds).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from brainmigrate.cited import cited_link, cited_path
from brainmigrate.links import repo_url_parts
from brainmigrate.model import Segment
from brainmigrate.notation import WS_CHARS
from brainmigrate.tokens import Token, tokens

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
