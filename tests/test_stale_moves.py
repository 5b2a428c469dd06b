"""Moves with evidence (SPEC.md §Staleness, the "moved" row): a file found by the same
name only when it holds at least half of the fingerprinted file's lines (the fingerprint's
sketch, or the file at its fingerprinted commit), and a byte-identical file at a new path
found for an anchor with lines as for one without. Real git checkouts, real stores made by
``import --verify``, the CLI."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from clirun import cli
from stored import rows, stale_states, verified_checkout
from trees import git, write

GUIDE = (
    "# Guide\n"
    "\n"
    "The meter counts bumps.\n"
    "Each bump adds one to the count.\n"
    "Reset sets the count back to zero.\n"
    "Run cargo test to check it.\n"
    "}\n"
)
TOP_README = "# brainmeter\n\nA meter of pulses, in Rust.\n\n## Build\n\ncargo build --release\n"
PIPELINE = "stages:\n  - build: cargo build\n  - test: cargo test\ndeploy: manual\n"


def tree(tmp_path: Path, monkeypatch, notes: str, files: dict[str, str]) -> Path:
    """``stored.verified_checkout`` of ``files`` and ``notes`` in ``tmp_path``, the current
    folder."""
    monkeypatch.chdir(tmp_path)
    return verified_checkout(tmp_path, files, notes)


def states(tmp_path: Path) -> dict[str, tuple[str, str | None]]:
    return stale_states(tmp_path / "know.db")


def move_by_hand(repo: Path, old: str, new: str, text: str) -> None:
    """``old`` deleted and ``text`` written at ``new``, uncommitted and not added: no
    rename git could tell."""
    (repo / old).unlink()
    write(repo, {new: text})


def test_a_fingerprint_keeps_a_sketch_of_its_files_lines(tmp_path, monkeypatch):
    long = "".join(f"line number {i} of many\n" for i in range(40))
    tree(
        tmp_path,
        monkeypatch,
        "+ the guide is doc/guide.md TER-1\n+ the long list is doc/long.md TER-2\n",
        {"doc/guide.md": GUIDE, "doc/long.md": long},
    )

    def hashed(text: str) -> list[str]:
        lines = {" ".join(line.split()) for line in text.split("\n")}
        kept = [ln for ln in lines if any(c.isalnum() for c in ln)]
        return sorted(hashlib.blake2b(ln.encode(), digest_size=4).hexdigest() for ln in kept)

    got = rows(tmp_path / "know.db", "SELECT path, sketch, digest_version FROM anchors")
    assert got == [
        # the six lines with a letter or digit; "}" and the blank line tell nothing
        ("doc/guide.md", "".join(hashed(GUIDE)), 2),
        # the 32 lowest of 40 hashes
        ("doc/long.md", "".join(hashed(long)[:32]), 2),
    ]
    assert len(got[0][1]) == 5 * 8 and len(got[1][1]) == 32 * 8


def test_the_same_name_is_no_move_without_half_of_the_lines(tmp_path, monkeypatch):
    """``doc/README.md`` gone is no move to the top ``README.md``, which shares none of
    its lines."""
    repo = tree(
        tmp_path,
        monkeypatch,
        "+ the guide is doc/README.md TER-1\n",
        {"doc/README.md": GUIDE, "README.md": TOP_README},
    )
    git(repo, "rm", "-q", "doc/README.md")
    git(repo, "commit", "-qm", "drop the guide")
    assert states(tmp_path) == {"k1": ("file gone", "STALE: file gone: doc/README.md")}


def test_the_same_name_holding_half_of_the_lines_is_the_move(tmp_path, monkeypatch):
    """Moved by hand with an edit: of two files of its name, the one that holds most of
    its lines is where it went; a file that holds fewer than half is not."""
    half = "# Guide\n\nThe meter counts bumps.\nEach bump adds one to the count.\n"
    repo = tree(
        tmp_path,
        monkeypatch,
        "+ the guide is doc/guide.md TER-1\n",
        {"doc/guide.md": GUIDE, "tools/guide.md": "# Guide\n\nThe tools are in bin.\n"},
    )
    edited = GUIDE.replace("Run cargo test", "Run cargo nextest")
    move_by_hand(repo, "doc/guide.md", "handbook/guide.md", edited)
    assert states(tmp_path) == {
        "k1": (
            "body changed",
            "STALE: body changed: handbook/guide.md (moved from doc/guide.md)",
        )
    }
    # three of its five lines (# Guide, and two more): half or more is enough
    (repo / "handbook/guide.md").write_text(half, encoding="utf-8")
    assert states(tmp_path)["k1"][0] == "body changed"
    (repo / "handbook/guide.md").write_text("# Guide\n\nSomething else.\n", encoding="utf-8")
    assert states(tmp_path) == {"k1": ("file gone", "STALE: file gone: doc/guide.md")}


def test_without_a_sketch_the_file_at_its_commit_is_the_evidence(tmp_path, monkeypatch):
    """A fingerprint taken before sketches (an upgraded store: no sketch) is matched with
    the file as its fingerprinted commit held it (``git show``); with no commit either,
    nothing tells a same-name file is the one cited: "file gone"."""
    repo = tree(
        tmp_path,
        monkeypatch,
        "+ the guide is doc/guide.md TER-1\n",
        {"doc/guide.md": GUIDE, "README.md": TOP_README},
    )
    db = tmp_path / "know.db"
    con = sqlite3.connect(db)
    con.execute("UPDATE anchors SET sketch = NULL, digest_version = 1")
    con.commit()
    con.close()
    move_by_hand(repo, "doc/guide.md", "handbook/guide.md", GUIDE)
    move_by_hand(repo, "README.md", "doc/README.md", TOP_README)
    assert states(tmp_path) == {"k1": ("moved", "STALE: moved: doc/guide.md → handbook/guide.md")}
    con = sqlite3.connect(db)
    con.execute("UPDATE anchors SET verified_commit = NULL")
    con.commit()
    con.close()
    # the same bytes are still found; a same-name file with an edit is not
    assert states(tmp_path) == {"k1": ("moved", "STALE: moved: doc/guide.md → handbook/guide.md")}
    (repo / "handbook/guide.md").write_text(GUIDE + "One more line.\n", encoding="utf-8")
    assert states(tmp_path) == {"k1": ("file gone", "STALE: file gone: doc/guide.md")}


def test_a_byte_identical_file_elsewhere_is_the_move_with_lines_or_without(tmp_path, monkeypatch):
    """Cited with lines or without, a file moved byte for byte under another name (no
    rename git could tell) reads moved."""
    repo = tree(
        tmp_path,
        monkeypatch,
        "+ the pipeline builds first, deploy/run.yaml:2-3 TER-1\n"
        "+ the pipeline is deploy/run.yaml TER-2\n",
        {"deploy/run.yaml": PIPELINE},
    )
    assert rows(tmp_path / "know.db", "SELECT target_kind, line_first FROM anchors") == [
        ("lines", 2),
        ("file", None),
    ]
    move_by_hand(repo, "deploy/run.yaml", "ops/pipeline.yaml", PIPELINE)
    assert states(tmp_path) == {
        "k1": ("moved", "STALE: moved: deploy/run.yaml → ops/pipeline.yaml:2-3"),
        "k2": ("moved", "STALE: moved: deploy/run.yaml → ops/pipeline.yaml"),
    }
    # two copies: no one place it moved to
    write(repo, {"ci/pipeline.yaml": PIPELINE})
    assert states(tmp_path) == {
        "k1": ("file gone", "STALE: file gone: deploy/run.yaml"),
        "k2": ("file gone", "STALE: file gone: deploy/run.yaml"),
    }


def test_a_fixed_citation_keeps_the_sketch_and_digest_form(tmp_path, monkeypatch):
    """``check --fix`` rewrites the citation of a renamed file and a re-import carries
    the anchor's fingerprint to the new path: its sketch and digest form too."""
    repo = tree(
        tmp_path, monkeypatch, "+ the guide is doc/guide.md TER-1\n", {"doc/guide.md": GUIDE}
    )
    db = tmp_path / "know.db"
    taken = rows(db, "SELECT body_digest, sketch, digest_version FROM anchors")
    git(repo, "mv", "doc/guide.md", "doc/handbook.md")
    git(repo, "commit", "-qm", "rename")
    r = cli("check", "notes", "--root", "repo", "--fix")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "notes/facts.md").read_text() == "+ the guide is doc/handbook.md TER-1\n"
    r = cli("import", "notes", "--root", "repo", "--store", "know.db")
    assert r.exit_code == 0, r.output
    assert rows(db, "SELECT path, body_digest, sketch, digest_version FROM anchors") == [
        ("doc/handbook.md", *taken[0])
    ]
    assert states(tmp_path) == {"k1": ("fresh", None)}


def test_a_version_1_fingerprint_is_looked_for_by_its_bytes_only(tmp_path, monkeypatch):
    """A file fingerprint of digest form 1 (an upgraded store) whose file is gone is no
    move to a file of the same version-1 digest but other bytes: looking for that digest
    would parse every file of the extension again on each run (docs/staleness.md
    "Moved"); the same bytes elsewhere still are its move."""
    from brainmigrate.codeindex.extract import extract_file

    source = "def f():\n    return 1\n"
    repo = tree(
        tmp_path,
        monkeypatch,
        "+ f is in src/a.py TER-1\n",
        {"src/a.py": source, "src/other.py": "X = 2\n"},
    )
    legacy = extract_file(source.encode(), "python", legacy=True)[2]
    con = sqlite3.connect(tmp_path / "know.db")
    con.execute(  # and no commit: git cannot take it again in the form of now
        "UPDATE anchors SET sketch = NULL, digest_version = 1, body_digest = ?,"
        " verified_commit = NULL",
        (legacy,),
    )
    con.commit()
    con.close()
    move_by_hand(repo, "src/a.py", "lib/b.py", "# moved here\n" + source)
    assert extract_file((repo / "lib/b.py").read_bytes(), "python", legacy=True)[2] == legacy
    assert states(tmp_path) == {"k1": ("file gone", "STALE: file gone: src/a.py")}
    write(repo, {"lib/b.py": source})
    assert states(tmp_path) == {"k1": ("moved", "STALE: moved: src/a.py → lib/b.py")}
