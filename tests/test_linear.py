"""Every extractor is linear in its input: adversarial 100k-character tokens.

Each case is timed at n and 10n characters (best of three); a quadratic extractor would take
about 100x longer on the larger input, a linear one about 10x. The bound leaves room for a
busy machine.
"""

from __future__ import annotations

import time

import pytest

from brainmigrate import anchors
from brainmigrate.merge.rule import Stems, numbers
from brainmigrate.model import Segment
from brainmigrate.read import cited, consumed, links, modules, notation, tokens
from brainmigrate.read.facts import TaskIds
from brainmigrate.read.run import ImportOptions

FAST = notation.classifier("fast")
#: An empty root outside any work tree (set by ``_empty_root``): a lookup there reads no
#: listing and no history.
EMPTY_ROOT: list = []


@pytest.fixture(scope="module", autouse=True)
def _empty_root(tmp_path_factory):
    EMPTY_ROOT[:] = [anchors.Root.of(0, tmp_path_factory.mktemp("empty-root"))]


TASKS = TaskIds()
STEMS = Stems()

EXTRACTORS = {
    "classify": FAST,
    "split_trailer": notation.split_trailer,
    "fold": notation.fold,
    "parse_stamp": notation.parse_stamp,
    "tokens": lambda s: list(anchors.tokens([Segment(1, 1, s)])),
    "path_like": anchors.path_like,
    # a fresh resolver per call: nothing cached (one token of 100k segments)
    "lookup": lambda s: anchors.PathResolver(EMPTY_ROOT).lookup(s + ".md"),
    "camelcase": anchors.camelcase_names,
    "tokens_references": lambda s: list(
        tokens.tokens([Segment(1, 1, s)], references={"a": "x.md", "a][": "y.md"})
    ),
    "cited_path": cited.cited_path,
    "cited_link": cited.cited_link,
    "html_targets": links.html_targets,
    "reference_links": lambda s: links.reference_links(s, {"a": "x.md"}),
    "repo_url_parts": lambda s: links.repo_url_parts("https://github.com/o/r/blob/" + s),
    "remote_parts": links.remote_parts,
    "modules": lambda s: list(modules.module_candidates([Segment(1, 1, s)])),
    "consumed": consumed.consumed,
    "span_regions": consumed.span_regions,
    "task_ids": TASKS.all,
    "stems": STEMS,
    "numbers": numbers,
}
UNITS = [
    "/",
    ".",
    "-",
    ":",
    "7",
    "<!--",
    "-->",
    "a/",
    "A",
    "aB",
    "Ab",
    "#L",
    ":1",
    ":1-",
    ",1",
    "TER-1",
    "[x](",
    "\\",
    "2026-",
    " <!-- ",
    "->",
    "=>",
    "\u2192",
    "'s",
    "<a href=",
    '<a href="',
    "<a x=y ",
    "[a][",
    "[a]",
    "][",
    "mdc:",
    "file://",
    ":1\u2013",
    "x[[",
    "[[",
    "https://",
    "blob/",
    "a.",
    "-m a.",
    "=a.",
    "@",
]


def best_time(fn, arg) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - t)
    return best


@pytest.mark.parametrize("name", sorted(EXTRACTORS))
def test_extractor_is_linear(name):
    fn = EXTRACTORS[name]
    for unit in UNITS:
        small = (unit * (10_000 // len(unit) + 1))[:10_000]
        large = (unit * (100_000 // len(unit) + 1))[:100_000]
        for prefix in ("", "+ ", "x/"):
            t_small = max(best_time(fn, prefix + small), 2e-4)
            t_large = best_time(fn, prefix + large)
            assert t_large < 0.5 or t_large / t_small < 40, (name, unit, prefix, t_small, t_large)


@pytest.mark.parametrize("kind", ["gone", "found"])
def test_a_fact_citing_many_paths_is_read_and_merged_in_linear_time(tmp_path, kind):
    # every cited path an anchor (found) or a gone citation: kept unique with sets, not
    # by scanning the fact's list for each one
    from brainmigrate import importer

    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    if kind == "found":
        for i in range(20_000):
            (root / "src" / f"f{i}.py").touch()

    def run(n: int) -> float:
        notes = tmp_path / f"n{n}" / "many.md"
        notes.parent.mkdir(exist_ok=True)
        notes.write_text("+ " + " ".join(f"src/f{i}.py" for i in range(n)) + "\n")
        options = ImportOptions(roots=[root])
        t = time.perf_counter()
        result = importer.import_notes([notes], options, tmp_path / "none.db", dry_run=True)
        took = time.perf_counter() - t
        (rec,) = list(result.facts)
        assert len(rec.anchors if kind == "found" else rec.gone) == n
        return took

    t_small, t_large = max(run(2_000), 2e-3), run(20_000)
    assert t_large < 0.5 or t_large / t_small < 40, (kind, t_small, t_large)
