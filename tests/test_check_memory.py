"""``check``'s findings kept in a temporary file (``rules.Findings``): memory stays flat
however many findings a run makes, and every report reads them back in order."""

from __future__ import annotations

import json
import tracemalloc

import pytest
from clirun import cli

from brainmigrate.rules import Finding, Findings

N = 20_000


def _finding(i: int, **extra) -> Finding:
    return Finding(
        code=extra.pop("code", "BM101"),
        severity=extra.pop("severity", "error"),
        file="n.md",
        line=i + 1,
        col=3,
        message=f"cites src/gone{i}.py, which no root holds",
        subject=f"src/gone{i}.py",
        scope="",
        fact_line=i + 1,
        fact_text=f"fact number {i} about src/gone{i}.py",
        fingerprint=f"{i:032x}",
        **extra,
    )


def test_findings_come_back_in_order_with_their_counts_across_batches():
    items = [_finding(i) for i in range(2500)]
    items += [_finding(2500, code="BM201", severity="warning", suppressed=True)]
    items += [_finding(2501, severity="info", baselined=True)]
    found = Findings(items)
    assert len(found) == 2502
    assert list(found) == items
    assert list(found) == items  # read again: a report may read them twice
    tally = found.tally()
    assert tally.total() == 2502
    assert tally.by_code() == {"BM101": 2501, "BM201": 1}
    assert tally.by_severity() == {"info": 1, "warning": 1, "error": 2500}
    assert (tally.suppressed(), tally.baselined()) == (1, 1)
    assert (tally.failing("error"), tally.failing("info")) == (2500, 2500)
    found.close()
    assert list(found) == [] and len(found) == 0


def test_a_small_check_makes_no_temporary_file(tmp_path, monkeypatch):
    """Fewer findings than a batch stay in memory: the start-up path opens no file in
    TMPDIR (and a TMPDIR that does not exist is never looked at)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "none"))
    (tmp_path / "root").mkdir()
    notes = tmp_path / "n.md"
    notes.write_text("".join(f"+ fact {i} about src/gone{i}.py\n" for i in range(100)))
    result = cli("check", "--isolated", "--no-progress", "--root", tmp_path / "root", notes)
    assert result.exit_code == 0, result.output
    rows = result.output.splitlines()
    assert len(rows) == 101
    assert rows[0] == (
        f"{notes}:1:16: BM103 warning cites src/gone0.py, but nothing of it is in any root"
        " (no file citation?)"
    )
    assert rows[-1] == (
        "OK: 1 file, 100 fact lines: 100 findings (0 error, 100 warning, 0 info);"
        " 0 failing at --fail-on error; 0 suppressed; 0 in the baseline"
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("findings")
    (base / "root").mkdir()
    (base / "plain.md").write_text(
        "".join(f"+ fact number {i} about the cache\n" for i in range(N))
    )
    (base / "gone.md").write_text(
        "".join(f"+ fact number {i} about src/gone.py\n" for i in range(N))
    )
    return base


def _peak(base, notes: str, *extra: str):
    tracemalloc.start()
    try:
        result = cli(
            "check", "--isolated", "--no-progress", "--root", base / "root",
            "--output", base / "out", *extra, base / notes,
        )  # fmt: skip
        top = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return top, result


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_a_checks_findings_are_spilled_so_its_memory_stays_flat(corpus, fmt):
    """20,000 citations of a path no root holds (BM103: one path, so what the resolver
    keeps a path is not counted) peak no higher than 100 bytes a finding above the same
    facts without them, each streamed report written to a file (each finding, held in a
    tuple, cost about 1 KB), and the report has every finding in order."""
    without, _ = _peak(corpus, "plain.md", "--format", fmt)
    with_them, result = _peak(corpus, "gone.md", "--format", fmt)
    assert result.exit_code == 0, result.output
    assert (with_them - without) / N < 100, (with_them - without) / N
    out = (corpus / "out").read_text()
    if fmt == "json":
        lines = [f["line"] for f in json.loads(out)["findings"]]
        assert lines == list(range(1, N + 1))
    elif fmt == "github":
        rows = out.splitlines()
        assert len(rows) == 10 + 1 + 1 + (N - 10) + 1 + 1  # annotations, stop, more, …
        assert rows[11] == f"{N - 10} more findings (GitHub shows 10 annotations of each kind):"
        assert rows[-3] == (
            f"{corpus / 'gone.md'}:{N}:27: BM103 cites src/gone.py, but nothing of it is in"
            " any root (no file citation?)"
        )
    else:
        rows = out.splitlines()
        assert len(rows) == N + 1
        assert rows[0] == (
            f"{corpus / 'gone.md'}:1:23: BM103 warning cites src/gone.py, but nothing of it"
            " is in any root (no file citation?)"
        )
        assert rows[-2].startswith(f"{corpus / 'gone.md'}:{N}:")


def test_findings_of_every_kind_come_in_report_order_through_the_temporary_files(
    tmp_path, monkeypatch
):
    """Citations, diagnostics and unused suppressions, each spilled a few at a time and
    sorted in runs, are merged in report order (file, line, column, code) as one sort
    in memory gave them."""
    import brainmigrate.spill as spill

    monkeypatch.setattr(spill, "BATCH", 7)
    monkeypatch.setattr(spill, "SORT_RUN", 50)
    (tmp_path / "root").mkdir()
    notes = tmp_path / "n.md"
    lines = []
    for i in range(300):
        lines.append(f"+ fact {i} about src/gone.py <!-- note -->\n")
        if i % 7 == 0:
            lines.append(f"+ fact {i}b about the cache <!-- brainmigrate: ignore BM102 -->\n")
    notes.write_text("".join(lines))
    result = cli(
        "check", "--isolated", "--no-progress", "--root", tmp_path / "root",
        "--format", "json", notes,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    found = [(f["line"], f["col"] or 0, f["code"]) for f in json.loads(result.output)["findings"]]
    assert found == sorted(found)
    codes = [code for _, _, code in found]
    assert (codes.count("BM103"), codes.count("BM301"), codes.count("BM401")) == (300, 300, 43)
