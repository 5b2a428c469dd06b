"""Start-up: what a short run imports, and the grammar and template caches (issue 14).

The caches live in the user cache folder, keyed by the text they were made from: a changed
grammar or template is built again, and a folder that cannot be written costs speed only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest

from brainmigrate import __version__, importer, reports
from brainmigrate.read import notation
from brainmigrate.read.run import ImportOptions

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
ROOTS = [SAMPLES / "roots/app", SAMPLES / "roots/infra"]


@pytest.fixture
def fresh_grammar(monkeypatch):
    """Forget the grammar built so far, before and after the test."""

    def clear():
        notation.parser.cache_clear()
        notation.terminals.cache_clear()
        notation._fast.cache_clear()

    clear()
    yield
    monkeypatch.undo()
    clear()


def _edited_grammar(tmp_path: Path) -> Path:
    """A copy of notation.lark in which ``&`` is one more fact marker."""
    text = (REPO / "grammar" / "notation.lark").read_text(encoding="utf-8")
    marker = "MARKER.4: /(?:->|[+!~=?>x])"
    assert marker in text
    copy = tmp_path / "notation.lark"
    copy.write_text(text.replace(marker, "MARKER.4: /(?:->|[+!~=?>x&])"), encoding="utf-8")
    return copy


def second_run(code: str, cache: Path) -> subprocess.CompletedProcess:
    """``python -c code`` in the project folder run twice with the cache folder ``cache``:
    the second run's result, every cache warm (a user's second run on)."""
    env = {**os.environ, "BRAINMIGRATE_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO
    )


def test_version_imports_no_library(tmp_path):
    code = (
        "import sys; sys.argv = ['brainmigrate', '--version']\n"
        "from brainmigrate.__main__ import run\n"
        "try:\n    run()\nexcept SystemExit as e:\n    code = e.code\n"
        "print(code, sorted(m for m in ('click', 'jinja2', 'lark', 'tree_sitter')"
        " if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert done.stdout == f"brainmigrate, version {__version__}\n0 []\n"


def test_script_entry_point_answers_like_click(tmp_path):
    """``brainmigrate --version`` (the script's own path) prints what click's option did."""
    done = subprocess.run(
        [sys.executable, "-c", "from brainmigrate.__main__ import run; run()", "--version"],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout) == (0, f"brainmigrate, version {__version__}\n")
    done = subprocess.run(  # anything else is click's
        [sys.executable, "-c", "from brainmigrate.__main__ import run; run()", "--nope"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stderr.startswith("brainmigrate: error: ")


def test_notes_reading_modules_do_not_import_jinja2_or_lark(tmp_path):
    code = (
        "import sys, brainmigrate.cli, brainmigrate.check, brainmigrate.read.notation\n"
        "brainmigrate.read.notation.classifier('fast')('+ a fact')\n"
        "print(sorted(m for m in ('jinja2', 'lark') if m in sys.modules))"
    )
    # the first run builds the grammar (imports lark) and caches it; the second reads it
    done = second_run(code, tmp_path)
    assert done.stdout == "[]\n"


def test_grammar_is_cached_and_a_changed_grammar_is_built_again(
    tmp_path, monkeypatch, fresh_grammar
):
    cache = tmp_path / "cache"
    monkeypatch.setenv("BRAINMIGRATE_CACHE_DIR", str(cache))
    assert notation.classifier("fast")("& a fact")[0] == "prose"
    assert notation.classifier("lark")("& a fact")[0] == "prose"
    first = sorted(p.name for p in (cache / "grammar").iterdir())
    assert len(first) == 2  # Lark's analysis and the terminals, named for the text
    assert all(name.startswith("notation-") for name in first)

    edited = _edited_grammar(tmp_path)
    monkeypatch.setattr(notation, "grammar_text", lambda: edited.read_text(encoding="utf-8"))
    notation.parser.cache_clear()
    notation.terminals.cache_clear()
    notation._fast.cache_clear()
    assert notation.classifier("fast")("& a fact") == ("fact", "&", 1)
    assert notation.classifier("lark")("& a fact") == ("fact", "&", 1)
    both = sorted(p.name for p in (cache / "grammar").iterdir())
    assert len(both) == 4 and set(first) < set(both)
    # read back from the cache in a new process-like state: the same answers
    notation.parser.cache_clear()
    notation.terminals.cache_clear()
    notation._fast.cache_clear()
    assert notation.classifier("fast")("& a fact") == ("fact", "&", 1)
    assert notation.classifier("lark")("& a fact") == ("fact", "&", 1)


def test_a_damaged_grammar_cache_is_built_again(tmp_path, monkeypatch, fresh_grammar):
    cache = tmp_path / "cache"
    monkeypatch.setenv("BRAINMIGRATE_CACHE_DIR", str(cache))
    expected = notation.classifier("fast")("!P3 flaky login test")
    for path in (cache / "grammar").iterdir():
        path.write_bytes(b"not a cache")
    notation.parser.cache_clear()
    notation.terminals.cache_clear()
    notation._fast.cache_clear()
    assert notation.classifier("fast")("!P3 flaky login test") == expected
    assert notation.classifier("lark")("!P3 flaky login test") == expected


def test_grammar_without_a_writable_cache_folder(tmp_path, monkeypatch, fresh_grammar):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("BRAINMIGRATE_CACHE_DIR", str(blocker / "cache"))
    assert notation.classifier("fast")("~ we keep UTC") == ("fact", "~", 1)
    assert notation.classifier("lark")("~ we keep UTC") == ("fact", "~", 1)
    assert blocker.read_text() == ""


def _sample_report() -> dict:
    options = ImportOptions(roots=ROOTS)
    result = importer.import_notes([SAMPLES / "notes"], options, "unused.db", dry_run=True)
    return reports.report(result)


def test_templates_are_cached_and_a_changed_template_is_compiled_again(tmp_path):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    source = (REPO / "brainmigrate/reports/templates/text.j2").read_text(encoding="utf-8")
    (templates / "text.j2").write_text(source, encoding="utf-8")
    data = _sample_report()
    expected = reports.render(data, "text")

    def render() -> str:
        env = reports.make_environment(jinja2.FileSystemLoader(str(templates)), cache)
        return env.get_template("text.j2").render(r=data, v=None)

    assert render() == expected
    cached = list(cache.iterdir())
    assert len(cached) == 1
    assert render() == expected  # loaded from the cache
    (templates / "text.j2").write_text("EDITED\n" + source, encoding="utf-8")
    assert render() == "EDITED\n" + expected


def test_templates_without_a_writable_cache_folder(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    data = _sample_report()
    loader = jinja2.PackageLoader("brainmigrate.reports", "templates")
    env = reports.make_environment(loader, blocker / "cache")
    assert env.get_template("text.j2").render(r=data, v=None) == reports.render(data, "text")
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o500)
    try:
        env = reports.make_environment(loader, read_only)
        assert env.get_template("text.j2").render(r=data, v=None) == reports.render(data, "text")
    finally:
        read_only.chmod(0o700)


def test_check_loads_only_what_it_uses(tmp_path):
    """`check` of the samples (text report, gone paths with no near name, warm caches)
    loads no template engine, parser generator, package metadata, fuzzy matcher or XML
    library: each costs a pre-commit hook 10-50 ms per run."""
    code = (
        "import sys\n"
        "from brainmigrate.__main__ import run\n"
        "sys.argv = ['brainmigrate', 'check', 'samples/notes', '--root', 'samples/roots/app',"
        " '--root', 'samples/roots/infra']\n"
        "try:\n    run()\nexcept SystemExit as e:\n    code = e.code\n"
        "print(code, sorted(m for m in ('jinja2', 'lark', 'importlib.metadata', 'rapidfuzz',"
        " 'xml.etree.ElementTree', 'regex') if m in sys.modules), file=sys.stderr)"
    )
    done = second_run(code, tmp_path)
    assert "BM101 error cites docker/certs/dev.pem, which no root holds" in done.stdout
    assert done.stderr.splitlines()[-1] == "1 []"


#: What a check of one fact line citing a file of its root does not use: the other
#: commands, the reports it does not write, what a root's tsconfig.json, package.json and
#: Markdown headings say (it has none). (pickle is used: the warm root's knowledge is read
#: from its cache file, ``codeindex.rootcache``.)
ONE_LINE_UNUSED = (
    "brainmigrate.roottables",
    "brainmigrate.cli.imports",
    "brainmigrate.cli.queries",
    "brainmigrate.cli.staleness",
    "brainmigrate.reports.github",
    "brainmigrate.reports.gitlab",
    "brainmigrate.reports.junit",
    "brainmigrate.reports.sarif",
    "brainmigrate.cli.rules",
    "brainmigrate.fix",
)


def test_a_one_line_check_loads_only_what_it_uses(tmp_path):
    """`check` of one fact line whose path the root holds, text report, warm caches: the
    check command's module and the library it runs, none of ``ONE_LINE_UNUSED``; its
    output is the same."""
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
    notes = tmp_path / "notes.md"
    notes.write_text("+ the app starts in `src/app.py`\n", encoding="utf-8")
    code = (
        "import sys\n"
        "from brainmigrate.__main__ import run\n"
        f"sys.argv = ['brainmigrate', 'check', {str(notes)!r}, '--root', {str(root)!r}]\n"
        "try:\n    run()\nexcept SystemExit as e:\n    code = e.code\n"
        f"print(code, [m for m in {ONE_LINE_UNUSED!r} if m in sys.modules], file=sys.stderr)"
    )
    done = second_run(code, tmp_path / "cache")
    assert done.stdout == (
        "OK: 1 file, 1 fact line: 0 findings (0 error, 0 warning, 0 info); 0 failing at"
        " --fail-on error; 0 suppressed; 0 in the baseline\n"
    )
    assert done.stderr.splitlines()[-1] == "0 []"


def test_every_command_is_known_before_its_module_is_loaded():
    """The group names every command (``--help``, "did you mean") and loads a command's
    module when the command is looked up: the same command objects either way."""
    from brainmigrate import cli
    from brainmigrate.cli import check, imports, queries, staleness

    names = "check export import index mcp put rule search serve server show stale verify".split()
    assert sorted(cli.main.commands) == names
    assert cli.main.commands["check"] is check.check_cmd
    assert cli.main.get_command(None, "import") is imports.import_cmd
    assert cli.main.get_command(None, "show") is queries.show_cmd
    assert cli.main.get_command(None, "verify") is staleness.verify_cmd
    assert cli.main.get_command(None, "nosuch") is None
    assert len(cli.main.commands) == len(names)


def test_index_cache_namespace_follows_the_installed_tree_sitter(tmp_path, monkeypatch):
    """Another build of tree-sitter or of the language pack (another file size or time in
    its folder) is another cache namespace: a cache made with the old one is not read."""
    from brainmigrate.codeindex import languages

    package = tmp_path / "tree_sitter_language_pack"
    (package / "bindings").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "bindings" / "go.so").write_bytes(b"v1")
    monkeypatch.syspath_prepend(str(tmp_path))  # also clears importlib's folder caches
    monkeypatch.delitem(sys.modules, "tree_sitter_language_pack", raising=False)
    languages.namespace.cache_clear()
    before = languages.namespace(1, 100)
    assert languages.installed_build("tree_sitter_language_pack").startswith("__init__.py:0:")
    (package / "bindings" / "go.so").write_bytes(b"v2 longer")
    languages.namespace.cache_clear()
    after = languages.namespace(1, 100)
    languages.namespace.cache_clear()
    assert before != after
    assert languages.installed_build("no_such_package_here") == "?"


def test_a_lazy_pattern_is_compiled_at_its_first_use_and_then_is_the_pattern():
    """``patterns.lazy``: nothing is compiled at import; the first use compiles the
    pattern and puts it in the stand-in's place in the module that made it; a reference
    kept before answers the same, as every pattern method does."""
    import re
    import types

    module = types.ModuleType("lazy_case")
    code = (
        "import re\n"
        "from brainmigrate.patterns import lazy\n"
        "WORD = lazy(r'(?P<w>[a-z]+)\\d', re.IGNORECASE)\n"
        "def first(text):\n"
        "    return WORD.search(text)\n"
    )
    exec(compile(code, "lazy_case.py", "exec"), module.__dict__)
    kept = module.WORD
    assert type(kept).__name__ == "Lazy"
    assert repr(kept) == "lazy('(?P<w>[a-z]+)\\\\d', re.IGNORECASE)"
    assert module.first("-- Ab1 cd2").group("w") == "Ab"
    assert isinstance(module.WORD, re.Pattern)  # in its place now
    plain = re.compile(r"(?P<w>[a-z]+)\d", re.IGNORECASE)
    assert module.WORD.pattern == kept.pattern == plain.pattern
    assert (kept.flags, kept.groups, kept.groupindex) == (plain.flags, 1, {"w": 1})
    assert [m.span() for m in kept.finditer("a1 b2")] == [(0, 2), (3, 5)]
    assert kept.sub("_", "a1 b2") == "_ _" and kept.subn("_", "a1") == ("_", 1)
    assert kept.split("a1b") == ["", "a", "b"] and kept.findall("x1 y2") == ["x", "y"]
    assert kept.match("z9").group() == "z9" and kept.fullmatch("z9 ") is None
