"""Every extractor is linear in its input: adversarial 100k-character tokens; and a fact
citing many paths is read in linear work.

The extractors are timed at n and 10n characters (best of three); a quadratic extractor
would take about 100x longer on the larger input, a linear one about 10x. The bound leaves
room for a busy machine; a first run at 10n in under 0.5 s passes at once (no quadratic
extractor is that fast on 100k characters). They stay timed because no count stands in
for their work: it is done inside C, by ``re`` (whose backtracking, the usual way such a
function goes quadratic, has no step counter) and by string operations (a slice, a join
or ``in`` per segment), none of which a Python-level count of calls or lines sees.

The many-paths test counts instead: what would make it quadratic is comparisons of record
objects, which a wrapper counts.
"""

from __future__ import annotations

import sys
import time

import pytest

from brainmigrate import check, importer, paths, roots
from brainmigrate.hints import MoveHints
from brainmigrate.merge.rule import Stems, numbers
from brainmigrate.model import Segment
from brainmigrate.read import cited, consumed, links, modules, notation, tokens
from brainmigrate.read.facts import TaskIds
from brainmigrate.read.files import notes_files
from brainmigrate.read.run import ImportOptions

FAST = notation.classifier("fast")
#: An empty root outside any work tree (set by ``_empty_root``): a lookup there reads no
#: listing and no history.
EMPTY_ROOT: list = []


@pytest.fixture(scope="module", autouse=True)
def _empty_root(tmp_path_factory):
    EMPTY_ROOT[:] = [roots.Root.of(0, tmp_path_factory.mktemp("empty-root"))]


TASKS = TaskIds()
STEMS = Stems()

EXTRACTORS = {
    "classify": FAST,
    "split_trailer": notation.split_trailer,
    "fold": notation.fold,
    "parse_stamp": notation.parse_stamp,
    "tokens": lambda s: list(tokens.tokens([Segment(1, 1, s)])),
    "path_like": tokens.path_like,
    # a fresh resolver per call: nothing cached (one token of 100k segments)
    "lookup": lambda s: paths.PathResolver(EMPTY_ROOT).lookup(s + ".md"),
    "camelcase": tokens.camelcase_names,
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


def best_time(fn, arg, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - t)
    return best


def slower_than_linear(fn, small: str, large: str) -> tuple[float, float] | None:
    """``(seconds on small, seconds on large)`` if ``fn`` takes 0.5 s or more on ``large``
    and 40x or more its time on ``small`` (best of three each), else None. A first run on
    ``large`` under 0.5 s settles it: no best of three can be slower."""
    if best_time(fn, large, runs=1) < 0.5:
        return None
    t_small = max(best_time(fn, small), 2e-4)
    t_large = best_time(fn, large)
    return None if t_large < 0.5 or t_large / t_small < 40 else (t_small, t_large)


@pytest.mark.parametrize("name", sorted(EXTRACTORS))
def test_extractor_is_linear(name):
    fn = EXTRACTORS[name]
    for unit in UNITS:
        small = (unit * (10_000 // len(unit) + 1))[:10_000]
        large = (unit * (100_000 // len(unit) + 1))[:100_000]
        for prefix in ("", "+ ", "x/"):
            slow = slower_than_linear(fn, prefix + small, prefix + large)
            assert slow is None, (name, unit, prefix, slow)


class Budget(Exception):
    """More operations than a linear run makes: the count stops the run early, not after
    the quadratic work."""


def counting(monkeypatch, cls: type, method: str, counts: dict, limit: int) -> None:
    """Wrap ``cls.method`` so each call adds 1 to ``counts[cls.__name__]``; past ``limit``
    calls in all, ``Budget`` is raised."""
    inner = getattr(cls, method)

    def counted(*args, **kwargs):
        counts[cls.__name__] = counts.get(cls.__name__, 0) + 1
        if sum(counts.values()) > limit:
            raise Budget(counts)
        return inner(*args, **kwargs)

    monkeypatch.setattr(cls, method, counted)


def python_calls(fn) -> tuple[int, object]:
    """``fn()`` run with every Python function call it makes counted (``sys.setprofile``):
    ``(calls, its result)``."""
    calls = 0

    def profile(frame, event, arg):
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(profile)
    try:
        result = fn()
    finally:
        sys.setprofile(None)
    return calls, result


@pytest.mark.parametrize("kind", ["gone", "found"])
def test_a_fact_citing_many_paths_is_read_and_merged_in_linear_work(tmp_path, monkeypatch, kind):
    """Every cited path an anchor (found) or a gone citation: kept unique with sets, not
    by scanning the fact's list for each one. Counted, not timed: the comparisons of
    anchors and citations (a scan makes n²/2 of them, a set about none), and the Python
    calls of the whole dry run (about 10x for 10x the paths)."""
    from brainmigrate import importer
    from brainmigrate.model import Anchor, Citation

    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    if kind == "found":
        for i in range(10_000):
            (root / "src" / f"f{i}.py").touch()

    def run(n: int) -> tuple[int, int]:
        notes = tmp_path / f"n{n}" / "many.md"
        notes.parent.mkdir(exist_ok=True)
        notes.write_text("+ " + " ".join(f"src/f{i}.py" for i in range(n)) + "\n")
        options = ImportOptions(roots=[root])
        compared: dict[str, int] = {}
        with monkeypatch.context() as m:
            for cls in (Anchor, Citation):
                counting(m, cls, "__eq__", compared, limit=4 * n)
            calls, result = python_calls(
                lambda: importer.import_notes([notes], options, tmp_path / "none.db", dry_run=True)
            )
        (rec,) = list(result.facts)
        assert len(rec.anchors if kind == "found" else rec.gone) == n
        return sum(compared.values()), calls

    (small_compared, small_calls), (large_compared, large_calls) = run(1_000), run(10_000)
    assert small_compared <= 4 * 1_000 and large_compared <= 4 * 10_000
    assert large_calls / small_calls < 15, (kind, small_calls, large_calls)


@pytest.mark.parametrize("unit", [" ^x", " ^ab-1 ", "\u3000^z\t", " ^x ^1"])
@pytest.mark.parametrize("alone", [False, True])
def test_trailing_block_ids_are_stripped_in_linear_time(unit, alone):
    """Every trailing `` ^id`` goes, found from the end by positions: a strip and a slice
    of the text per id made a 600 KB line of ids take 22 s. Timed as the extractors are
    (the work is inside ``str``), at 20k and 200k characters."""
    small, large = "+ fact" + unit * (20_000 // len(unit)), "+ fact" + unit * (200_000 // len(unit))
    slow = slower_than_linear(lambda s: notation.split_block_id(s, alone), small, large)
    assert slow is None, (unit, slow)


def test_a_line_of_many_block_ids_imports_as_its_text(tmp_path):
    """The rule unchanged on a real notes file: every trailing id goes, on a fact's first
    line and on a continuation line; a lone first id is the text; ``^123`` stays."""
    from brainmigrate import importer

    notes = tmp_path / "ids.md"
    notes.write_text(
        "+ fact one" + " ^x" * 100_000 + "\n"
        "+ ^abc ^def\n"
        "+ keep ^123 ^a-1\n"
        "+ two\n  more ^z9 \t^y\n",
        encoding="utf-8",
    )
    result = importer.import_notes(
        [notes], ImportOptions(roots=[]), tmp_path / "none.db", dry_run=True
    )
    assert [rec.text for rec in result.facts] == ["fact one", "^abc", "keep ^123", "two more"]


def all_calls(fn) -> tuple[int, object]:
    """``fn()`` run with every call it makes counted, Python functions and built-in ones
    (``sys.setprofile``'s ``call`` and ``c_call``): ``(calls, its result)``. A loop in
    Python over pairs of lines or tokens makes built-in calls (``dict.get``, ``len``)
    each turn, so this counts the work of the loops too."""
    calls = 0

    def profile(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(profile)
    try:
        result = fn()
    finally:
        sys.setprofile(None)
    return calls, result


def _moved_repo(root, n: int) -> None:
    """A git checkout ``root`` whose ``n`` files ``src/f<i>.py`` (each its own content)
    were moved to ``lib/`` in the last commit."""
    from trees import committed, git

    committed(root, {f"src/f{i}.py": f"def f{i}():\n    return {i}\n" for i in range(n)})
    git(root, "mv", "src", "lib")
    git(root, "commit", "-qm", "move")


def test_fixes_of_many_citations_on_one_line_are_planned_and_shown_in_linear_work(tmp_path):
    """``--diff`` and ``--fix`` planning of one line citing n moved files: the line is
    decoded and read into tokens once, not once per citation (and once more per citation
    to read the rewrite back); 8,000 citations took 223 s. Counted, not timed: every
    call of planning and of the diff, at n and 10n."""
    from brainmigrate import fix
    from brainmigrate.reports.fix import unified_diff

    def run(n: int) -> int:
        root, notes = tmp_path / f"r{n}", tmp_path / f"n{n}" / "many.md"
        _moved_repo(root, n)
        notes.parent.mkdir()
        notes.write_text("+ " + " ".join(f"src/f{i}.py" for i in range(n)) + "\n")
        options = ImportOptions(roots=[root])
        first = check.run_check([notes], options)
        files = dict(notes_files([notes]))
        hints = MoveHints(importer.make_roots([root]), None)
        roots = importer.make_roots([root])
        calls, result = all_calls(
            lambda: unified_diff(fix.plan_fixes(first.findings, files, roots, hints).edits)
        )
        want = "+ " + " ".join(f"lib/f{i}.py" for i in range(n)) + "\n"
        assert notes.read_text() != want and result.endswith(b"\n+" + want.encode())
        return calls

    small, large = run(200), run(2_000)
    assert large / small < 15, (small, large)


def test_a_diff_of_many_equal_lines_is_linear():
    """The hunks of ``--diff`` pair lines one for one (a fix never adds or removes a line
    end): ``difflib`` matched 2,000 lines, half of them alike, in 26 s. Counted at n and
    10n lines, and the exact hunks of a small case."""
    from brainmigrate.fix import FileEdit
    from brainmigrate.reports.fix import unified_diff

    def edit(n: int) -> FileEdit:
        before = b"".join(b"+ see src/a.py\n" if i % 2 else b"+ x\n" for i in range(n))
        return FileEdit("n.md", "n.md", before, before.replace(b"src/a.py", b"lib/a.py"))

    small, _ = all_calls(lambda: unified_diff([edit(200)]))
    large, _ = all_calls(lambda: unified_diff([edit(2_000)]))
    assert large / small < 15, (small, large)
    before = b"+ a\n+ b src/x.py\n+ b lib/x.py\n" + b"+ c\n" * 7 + b"+ src/x.py"
    after = before.replace(b"src/x.py", b"lib/x.py")
    assert unified_diff([FileEdit("n.md", "n.md", before, after)], context=1) == (
        b"--- a/n.md\n+++ b/n.md\n"
        b"@@ -1,3 +1,3 @@\n + a\n-+ b src/x.py\n++ b lib/x.py\n + b lib/x.py\n"
        b"@@ -10,2 +10,2 @@\n + c\n-+ src/x.py\n\\ No newline at end of file\n"
        b"++ lib/x.py\n\\ No newline at end of file\n"
    )


@pytest.mark.parametrize("unit", ["_SUPERSEDED", "-SUPERSEDED", " SUPERSEDED.", " a/SUPERSEDED"])
def test_the_superseded_word_is_found_in_linear_time(unit):
    """``SUPERSEDED`` passed over in a name is judged once per name run and per chunk, not
    once per word found (a name run ending in ``.py`` after 10k of them)."""
    from brainmigrate.read.facts import is_superseded

    small, large = unit * (20_000 // len(unit)) + ".py", unit * (200_000 // len(unit)) + ".py"
    assert slower_than_linear(is_superseded, small, large) is None


def _import_with(tmp_path, pattern: str, line: str):
    """``import --dry-run --format json`` of a notes file whose third fact is ``line``,
    with ``--task-pattern pattern``, as its own process (a pattern without a bound would
    run for hours: the test stops it after 60 s)."""
    import subprocess

    (tmp_path / "notes.md").write_text(f"+ first fact TER-1\n+ second aaa\n+ {line}\n")
    return subprocess.run(
        [sys.executable, "-m", "brainmigrate", "import", "notes.md", "--dry-run"]
        + ["--isolated", "--no-progress", "--format", "json", "--task-pattern", pattern],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_task_pattern_that_backtracks_without_end_is_stopped(tmp_path):
    """A ``--task-pattern`` runs with a time bound: past 1 s on one fact's text the run
    stops with a one-line error naming the pattern and the fact's line (exit 2), and
    nothing is written. ``(a|aa)+$`` on 60 ``a`` and a ``!`` backtracks for hours in
    ``re``."""
    done = _import_with(tmp_path, "(a|aa)+$", "a" * 60 + "!")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "brainmigrate: error: --task-pattern '(a|aa)+$' took over 1 s on notes.md:3; simplify it\n",
    )
    assert not (tmp_path / "know.db").exists()


def test_a_task_pattern_that_nests_repeats_reads_its_facts(tmp_path):
    """``(a+)+$`` on 40 ``a`` and a ``!`` (2^40 ways to fail in ``re``) ends at once with
    the ``regex`` module, and the facts are read with the pattern's task ids."""
    import json

    done = _import_with(tmp_path, "(a+)+$", "a" * 40 + "!")
    assert (done.returncode, done.stderr) == (0, "")
    facts = [(f["text"], f["task"]) for f in json.loads(done.stdout)["facts"]]
    assert facts == [("first fact TER-1", None), ("second aaa", "aaa"), ("a" * 40 + "!", None)]


def test_markdown_globs_with_many_stars_match_at_once(tmp_path):
    """The configuration's ``markdown`` globs are a user's patterns: ``*a`` 12 times over
    and ``*b.md`` against a file named with 40 ``a`` backtracked in ``re`` for minutes a
    path (the test stops it after 30 s); the ``regex`` module (with a time bound) answers
    at once, and the file, which no glob matches, is read as brain notation."""
    import json
    import subprocess

    (tmp_path / ".brainmigrate.toml").write_text('markdown = ["' + "*a" * 12 + '*b.md"]\n')
    notes = tmp_path / ("a" * 40 + ".md")
    notes.write_text("+ a fact\n- a list item, no fact in brain notation\n")
    done = subprocess.run(
        [sys.executable, "-m", "brainmigrate", "import", notes.name, "--dry-run"]
        + ["--no-progress", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert [f["text"] for f in json.loads(done.stdout)["facts"]] == ["a fact"]
