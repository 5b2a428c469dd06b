"""Properties over generated notes: nothing escapes, every line is counted, re-import is a
no-op, a dry run reports what the import does (SPEC.md §Report invariants)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brainmigrate import importer, reports
from brainmigrate.read.run import ImportOptions

PIECES = [
    "+ ",
    "! ",
    "~ ",
    "= ",
    "? ",
    "> ",
    "-> ",
    "x ",
    "- ",
    "* ",
    "!P3 ",
    "@ ",
    "% ",
    "# ",
    "  ",
    "\t",
    "```",
    "~~~",
    "<!--",
    "-->",
    "<!-- 2026-09-23 13:16:09 run -->",
    "<!-- 2026-02-30 10:00 r -->",
    "<!-- note -->",
    "TER-167",
    "SHA-256",
    "ter-5",
    "SUPERSEDED",
    "app/src/Foo.kt:88",
    "../x.kt",
    "/etc/passwd",
    "https://a.b/c.html",
    "PaymentGateway",
    "Foo.kt",
    "and/or",
    "retries",
    "cache",
    "12",
    "\r",
    "\u2028",
    "\u00a0",
    "\ufeff",
    "word",
    ".",
    "(",
    ")",
    "`",
    "[!note]",
    ">",
]
line = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
notes = st.lists(line, max_size=25).map("\n".join)
raw = st.one_of(
    notes.map(lambda s: s.encode("utf-8")),
    st.binary(max_size=300),
    notes.map(lambda s: b"\xef\xbb\xbf" + s.replace("\n", "\r\n").encode() + b"\xff\x00"),
    # what PowerShell's ">" writes, and a stray odd byte at the end
    notes.map(lambda s: b"\xff\xfe" + s.replace("\n", "\r\n").encode("utf-16-le") + b"!"),
)


def counts_add_up(data: dict) -> None:
    keys = ("lines", "fact_lines", "continuations", "blank", "skipped")
    for entry in [data["totals"], *data["files"]]:
        assert entry["lines"] == (
            entry["fact_lines"] + entry["continuations"] + entry["blank"] + entry["skipped"]
        )
    for key in keys:
        assert data["totals"][key] == sum(f[key] for f in data["files"])
    assert sum(data["totals"]["skipped_by_reason"].values()) == data["totals"]["skipped"]
    assert sum(data["totals"]["by_kind"].values()) == data["totals"]["facts"]
    assert sum(data["totals"]["by_marker"].values()) == data["totals"]["facts"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(raw, min_size=1, max_size=3))
def test_import_properties(contents):
    tmp = Path(tempfile.mkdtemp(prefix="bm-prop-"))
    try:
        root = tmp / "root"
        (root / "app" / "src").mkdir(parents=True)
        (root / "app" / "src" / "Foo.kt").write_text("class PaymentGateway\n")
        paths = []
        for i, data in enumerate(contents):
            p = tmp / f"n{i}.md"
            p.write_bytes(data)
            paths.append(p)
        options = ImportOptions(roots=[root], cache_dir=tmp / "cache")
        db = tmp / "know.db"
        dry = reports.report(importer.import_notes(paths, options, db, dry_run=True))
        counts_add_up(dry)
        assert dry["totals"]["fact_lines"] == dry["totals"]["facts"] + dry["totals"]["merged"]
        real = reports.report(importer.import_notes(paths, options, db))
        for key in ("dry_run",):
            dry.pop(key), real.pop(key)
        assert real == dry
        again = reports.report(importer.import_notes(paths, options, db))
        assert again["totals"]["added"] == 0 and again["totals"]["updated"] == 0
        counts_add_up(again)
    finally:
        shutil.rmtree(tmp)
