"""Basic Memory notes read as facts (issue 30; docs/migrate.md "Basic Memory"): what each
note line becomes, on the vault under ``tests/fixtures/sources/vault`` and notes written
in ``tmp_path``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from clirun import cli
from stored import rows

from brainmigrate.read.files import InputError
from brainmigrate.sources import Entry, Reading, Skip, load_all
from brainmigrate.sources.basic_memory import BasicMemory, permalink_of

VAULT = Path(__file__).parent / "fixtures" / "sources" / "vault"
SQL = "SELECT id, scope, kind, text, related FROM facts ORDER BY id"
PROSE = (
    "no observation '- [category] text' or relation '- relation_type [[Target]]',"
    " not read as a fact"
)


def read(source: BasicMemory, path: Path, scope: str | None = None) -> list[tuple]:
    """Each item ``source`` yields for ``path`` as a tuple: an entry's line, col, kind,
    scope, text, key and relates_to; a skip's line, col and reason."""
    out = []
    for item in source.entries(path, Reading(path.name, scope=scope)):
        if isinstance(item, Skip):
            assert item.file == path.name
            out.append((item.line, item.col, item.reason))
        else:
            assert isinstance(item, Entry) and item.file == path.name
            out.append(
                (item.line, item.col, item.kind, item.scope, item.text, item.key, item.relates_to)
            )
    return out


@pytest.fixture
def vault() -> BasicMemory:
    """The source with the fixture vault walked (its notes' permalinks learnt)."""
    source = BasicMemory()
    source.files(VAULT)
    return source


def test_registered_under_its_from_name():
    assert isinstance(load_all()["basic-memory"], BasicMemory)


def test_a_vault_is_its_md_files_sorted():
    names = [p.relative_to(VAULT).as_posix() for p in BasicMemory().files(VAULT)]
    assert names == [
        "README.md",
        "broken.md",
        "notes/tokenizer-notes.md",
        "specs/search-design.md",
        "storage layout.md",
    ]


def test_observations_are_facts_relations_name_the_notes_they_link(vault):
    assert read(vault, VAULT / "specs" / "search-design.md") == [
        (10, 1, "prose (2 lines to line 11): " + PROSE),
        (14, 14, "decision", "area:specs/search-design",
         "Rank hits with BM25 over stemmed words #ranking (chosen over TF-IDF) #search #fts5",
         "search-design", ("storage-layout", "tokenizer-notes")),
        (15, 3, "other", "area:specs/search-design",
         "[idea] Highlight the matched stems in the terminal #search #fts5",
         "search-design", ("storage-layout", "tokenizer-notes")),
        (16, 3, "other", "area:specs/search-design",
         "[constraint] A query answers within 50 ms over 10000 facts #perf #search #fts5",
         "search-design", ("storage-layout", "tokenizer-notes")),
    ]  # fmt: skip


def test_crlf_note_without_permalink_is_scoped_by_its_stem_tags_split_at_commas(vault):
    raw = (VAULT / "storage layout.md").read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n") == 9  # the fixture is CRLF throughout
    assert read(vault, VAULT / "storage layout.md") == [
        (7, 17, "environment", "area:storage-layout",
         "The store is one SQLite database beside the notes #storage #sqlite",
         "storage-layout", ("search-design",)),
        (8, 13, "pattern", "area:storage-layout",
         "One transaction per import #atomicity #storage #sqlite",
         "storage-layout", ("search-design",)),
    ]  # fmt: skip


def test_unicode_task_boxes_broken_observations_and_code_blocks(vault):
    assert read(vault, VAULT / "notes" / "tokenizer-notes.md") == [
        (11, 9, "blocker", "area:tokenizer-notes",
         "Café and cafe must share one stem ✓ #unicode #café",
         "tokenizer-notes", ("search-design",)),
        (12, 1, "prose (3 lines to line 14): " + PROSE),
        (19, 3, "other", "area:tokenizer-notes",
         "[Naming] Stems are lower-cased before they are compared #unicode #café",
         "tokenizer-notes", ("search-design",)),
    ]  # fmt: skip


def test_front_matter_that_is_no_mapping_and_an_empty_observation_are_skips(vault):
    assert read(vault, VAULT / "broken.md") == [
        (1, 1, "front matter is no YAML mapping (a list)"),
        (5, 14, "decision", "area:broken",
         "Keep notes whose front matter is broken readable", "broken", ()),
        (6, 3, "observation [decision] has no text"),
    ]  # fmt: skip


def test_a_note_of_prose_only_yields_one_skip(vault):
    assert read(vault, VAULT / "README.md") == [(3, 1, "prose (1 line): " + PROSE)]


def test_a_single_file_unwalked_links_by_the_targets_permalink(tmp_path):
    note = tmp_path / "Deploy Notes.md"
    note.write_text(
        "---\ntitle: Deploy Notes\ntags: ops\n---\n"
        "  * [Env] Deploys run from the build box #ci\n"
        "- [decision] Blue-green deploys, see [[Rollback Plan|the plan]]\n"
        "- follows [[Release Train]]\n",
        encoding="utf-8",
    )
    assert read(BasicMemory(), note) == [
        (5, 11, "environment", "area:deploy-notes", "Deploys run from the build box #ci #ops",
         "deploy-notes", ("rollback-plan", "release-train")),
        (6, 14, "decision", "area:deploy-notes",
         "Blue-green deploys, see [[Rollback Plan|the plan]] #ops",
         "deploy-notes", ("rollback-plan", "release-train")),
    ]  # fmt: skip


def test_scope_given_overrides_the_notes(tmp_path):
    note = tmp_path / "n.md"
    note.write_text("---\npermalink: x/y\n---\n- [pattern] Retry twice\n", encoding="utf-8")
    assert read(BasicMemory(), note, scope="area:ops") == [
        (4, 13, "pattern", "area:ops", "Retry twice", "n", ())
    ]


def test_front_matter_that_is_no_yaml_and_bytes_that_are_no_utf8(tmp_path):
    note = tmp_path / "bad.md"
    note.write_bytes(
        b"---\ntitle: [unclosed\n---\n- [decision] Keep \xff going\n- [decision] Still read\n"
    )
    got = read(BasicMemory(), note)
    # one line, where it goes wrong in the file (it was pyyaml's text cut at 160 characters)
    assert got[0] == (
        1,
        1,
        "front matter is no YAML (expected ',' or ']', but got '<stream end>' at line 2,"
        " column 17)",
    )
    assert got[1:] == [
        (4, 19, "not UTF-8, the line is not read"),
        (5, 14, "decision", "area:bad", "Still read", "bad", ()),
    ]


def test_a_missing_note_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"^gone\.md:1:1: no such file or folder$"):
        list(BasicMemory().entries(tmp_path / "gone.md", Reading("gone.md")))


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # a permalink alone (a Jekyll or Hugo page) is no note; one observation beside it is
        ("---\npermalink: a\n---\nprose\n", False),
        ("---\npermalink: a\n---\nprose\n- [decision] one\n", True),
        ("- [decision] one\n- [idea] two\n", True),
        ("- [decision] only one\n", False),
        ("- [x] done\n- [ ] to do\n- [link](https://x)\n", False),
        ("# CLAUDE.md\n\n- keep imports sorted\n", False),
        ("```md\n- [decision] one\n- [idea] two\n```\n", False),  # an example, not a note
    ],
)
def test_detect_a_note(tmp_path, text, found):
    note = tmp_path / "n.md"
    note.write_text(text, encoding="utf-8")
    assert BasicMemory().detect(note, text) is found
    assert BasicMemory().detect(tmp_path / "n.txt", text) is False


def test_detect_a_vault_by_most_of_its_notes(tmp_path):
    assert BasicMemory().detect(VAULT, "") is True  # 4 of its 5 notes
    (tmp_path / "a.md").write_text("---\npermalink: a\n---\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# plain\n", encoding="utf-8")
    assert BasicMemory().detect(tmp_path, "") is False  # 1 of 2 is no majority
    assert BasicMemory().detect(tmp_path / "b.md", "# plain\n") is False


def test_permalink_of():
    assert permalink_of("Search Design") == "search-design"
    assert permalink_of("specs/API v2 (draft)") == "specs/api-v2-draft"
    assert permalink_of("Zoë_Tanaka") == "zoë-tanaka"


def test_a_link_by_a_custom_permalink_needs_the_vault_walked(tmp_path):
    (tmp_path / "db.md").write_text(
        "---\ntitle: Storage Layout\npermalink: arch/db\n---\n- [decision] One file\n",
        encoding="utf-8",
    )
    (tmp_path / "api.md").write_text("- [decision] REST\n- uses [[arch/db]]\n", encoding="utf-8")
    walked = BasicMemory()
    walked.files(tmp_path)
    assert read(walked, tmp_path / "api.md")[0][-1] == ("storage-layout",)
    assert read(BasicMemory(), tmp_path / "api.md")[0][-1] == ("db",)  # the target's own key


#: The fixture vault's facts as the store keeps them: id, scope, kind, text, related.
STORED = [
    (1, "area:broken", "decision", "Keep notes whose front matter is broken readable", "[]"),
    (2, "area:tokenizer-notes", "blocker", "Café and cafe must share one stem ✓ #unicode #café",
     "[4]"),
    (3, "area:tokenizer-notes", "other",
     "[Naming] Stems are lower-cased before they are compared #unicode #café", "[4]"),
    (4, "area:specs/search-design", "decision",
     "Rank hits with BM25 over stemmed words #ranking (chosen over TF-IDF) #search #fts5",
     "[7, 2]"),
    (5, "area:specs/search-design", "other",
     "[idea] Highlight the matched stems in the terminal #search #fts5", "[7, 2]"),
    (6, "area:specs/search-design", "other",
     "[constraint] A query answers within 50 ms over 10000 facts #perf #search #fts5", "[7, 2]"),
    (7, "area:storage-layout", "environment",
     "The store is one SQLite database beside the notes #storage #sqlite", "[4]"),
    (8, "area:storage-layout", "pattern", "One transaction per import #atomicity #storage #sqlite",
     "[4]"),
]  # fmt: skip


@pytest.mark.parametrize("given", [("--from", "basic-memory"), ()], ids=["from", "detected"])
def test_import_a_vault_then_search_and_show(tmp_path, monkeypatch, given):
    """``import --from basic-memory VAULT`` and detection without ``--from`` make the same
    store; search finds a front matter tag and a category kept in the text; show lists the
    facts of the notes a relation names."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(VAULT, "vault")
    r = cli("import", *given, "vault", "--store", "know.db")
    assert r.exit_code == 0, r.output
    assert rows(tmp_path / "know.db", SQL) == STORED
    assert "  vault/broken.md:1:1: BM312 front matter is no YAML mapping (a list)\n" in r.output
    assert (
        "  vault/notes/tokenizer-notes.md:12:1: BM312 prose (3 lines to line 14): " + PROSE
    ) in r.output
    r = cli("search", "fts5", "--store", "know.db")
    assert [line.split()[0] for line in r.stdout.splitlines()] == ["k5", "k6", "k4"]
    r = cli("search", "idea", "--store", "know.db")
    assert r.stdout.splitlines() == [
        "k5 other area:specs/search-design  [idea] Highlight the matched stems in the terminal"
        " #search #fts5"
    ]
    assert "\nrelated: k7, k2\n" in cli("show", "k6", "--store", "know.db").stdout


def test_a_vault_imported_twice_adds_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(VAULT, "vault")
    for _ in range(2):
        r = cli("import", "--from", "basic-memory", "vault", "--store", "know.db")
        assert r.exit_code == 0, r.output
    assert r.output.startswith(
        "Imported into know.db: nothing changed, every fact was already there\n"
    )
    assert rows(tmp_path / "know.db", SQL) == STORED


def test_a_walk_links_only_within_its_own_vault(tmp_path):
    for vault in ("one", "two"):
        (tmp_path / vault).mkdir()
    (tmp_path / "one" / "db.md").write_text(
        "---\ntitle: Storage\npermalink: arch/db\n---\n- [decision] One file\n", encoding="utf-8"
    )
    (tmp_path / "two" / "api.md").write_text(
        "- [idea] REST\n- uses [[arch/db]]\n", encoding="utf-8"
    )
    source = BasicMemory()
    source.files(tmp_path / "one")
    source.files(tmp_path / "two")  # arch/db is no note of this vault: its own key
    assert read(source, tmp_path / "two" / "api.md")[0][-1] == ("db",)
