"""Each distinct citation is resolved once per run (``anchors.Resolver``'s and
``paths.PathResolver``'s answers kept by what they depend on): the answers kept are the
answers a fresh resolver gives, and every repeat of a citation is still reported at its
own place."""

from __future__ import annotations

import json

import pytest

from brainmigrate import anchors, check, paths
from brainmigrate.read.run import ImportOptions
from brainmigrate.reports import ci
from tests.trees import committed, write

#: Notes in three folders of the checkout and one outside it, each citing the same
#: relative, absolute, gone, ambiguous, line-past-the-end and fragment citations.
NOTES = """\
+ see ./local.md and ../up.md and `sub/`
+ src/app/main.py:400 runs it, src/app/main.py:2 too
+ {root}/src/app/main.py and /etc/passwd and src/gone.py
+ the README.md#nowhere and README.md#title and util.py
+ PaymentGateway and src/app/Moved.kt and docs/sub/local.md
"""


@pytest.fixture
def tree(tmp_path):
    root = committed(
        tmp_path / "app",
        {
            "README.md": "# Title\n",
            "src/app/main.py": "a\nb\nc\n",
            "src/app/util.py": "x\n",
            "lib/util.py": "y\n",
            "src/app/Moved.kt": "class PaymentGateway\n",
            "docs/local.md": "d\n",
            "docs/sub/local.md": "e\n",
            "up.md": "u\n",
            "lib/PaymentGateway.kt": "class PaymentGateway\n",
        },
    )
    text = NOTES.format(root=root)
    notes = {
        "docs/a.md": text,
        "docs/sub/b.md": text,
        "other/c.md": text,
        "docs/sub/d.md": text + text,
    }
    write(root, notes)
    write(tmp_path / "outside", {"e.md": text})
    files = [root / n for n in notes] + [tmp_path / "outside/e.md"]
    return root, files, tmp_path / "cache"


def _fresh(monkeypatch):
    """Every fact resolved by a resolver that keeps no answer from one fact to the next."""
    scan = anchors.Resolver.scan
    resolve = paths.PathResolver.resolve

    def forgetful_scan(self, *args, **kwargs):
        self._shapes.clear()
        self._camels.clear()
        self._anchors.clear()
        p = self.paths
        p._cache.clear(), p._at_cache.clear(), p._places.clear(), p._cited.clear()
        return scan(self, *args, **kwargs)

    def forgetful_resolve(self, *args, **kwargs):
        self._cache.clear()
        self._places.clear()
        return resolve(self, *args, **kwargs)

    monkeypatch.setattr(anchors.Resolver, "scan", forgetful_scan)
    monkeypatch.setattr(paths.PathResolver, "resolve", forgetful_resolve)


def _report(root, files, cache):
    options = ImportOptions(roots=[str(root)], cache_dir=str(cache))
    result = check.run_check([str(f) for f in files], options)
    return ci.as_json(result)


def test_answers_kept_are_a_fresh_resolvers_answers(tree, monkeypatch):
    root, files, cache = tree
    kept = _report(root, files, cache)
    with monkeypatch.context() as m:
        _fresh(m)
        fresh = _report(root, files, cache)
    assert kept == fresh
    found = json.loads(kept)["findings"]
    codes = {f["code"] for f in found}
    # gone, outside, ambiguous, line past the end, no such heading: all asked, all kept
    assert {"BM101", "BM102", "BM201", "BM204", "BM205"} <= codes


def test_a_repeated_citation_is_reported_at_each_place(tree):
    root, files, cache = tree
    found = json.loads(_report(root, files, cache))["findings"]
    gone = [(f["file"], f["line"], f["col"]) for f in found if f["path"] == "src/gone.py"]
    names = [str(f) for f in files]
    # once per fact citing it: files a, b, c, d (twice) and the one outside
    lines = [3, 3, 3, 3, 8, 3]
    order = [names[0], names[1], names[2], names[3], names[3], names[4]]
    col = NOTES.format(root=root).splitlines()[2].index("src/gone.py") + 1
    assert gone == [(n, line, col) for n, line in zip(order, lines, strict=True)]
    past = [(f["file"], f["line"]) for f in found if f["code"] == "BM204"]
    assert past == [(n, line - 1) for n, line in zip(order, lines, strict=True)]


def test_notes_folders_the_roots_see_alike_share_answers(tree):
    root, files, cache = tree
    r = anchors.Resolver(check.importer.make_roots([str(root)]))
    p = r.paths
    under = str(root / "docs")
    # a folder inside the checkout is its own place; folders under no root are one place
    assert p.resolve("./local.md", under, near=True) == ("found", 0, "docs/local.md", "file")
    assert p.resolve("./local.md", str(root / "docs/sub"), near=True) == (
        "found",
        0,
        "docs/sub/local.md",
        "file",
    )
    assert p.resolve("./local.md", "/nowhere/x", near=True) == p.resolve(
        "./local.md", "/elsewhere/y", near=True
    )
    assert set(p._places.values()) == {None, (0, "docs"), (0, "docs/sub")}
