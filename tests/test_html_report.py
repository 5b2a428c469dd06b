"""The import report as Markdown and as a self-contained HTML audit page (reports/templates)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner
from clirun import cli as run
from stored import verified_checkout

from brainmigrate import __version__, cli, importer, reports
from brainmigrate.read.run import ImportOptions

NOTES = """\
# hostile

+ <script>alert("x")</script> & friends live in src/gone.kt <!-- 2026-01-02 03:04 r1 -->
~ pipes | and *stars* and `ticks` stay text, see src/app.py:2
+ <script>alert("x")</script> & friends live in src/gone.kt
"""


def code(path: str, tail: str = "") -> str:
    """The page's markup of ``path`` (``file:line:col``, an anchor's path and its
    ``#symbol:lines`` tail): one unbreakable span per part, a break opportunity after each
    ``/``, so a long path wraps between its folders and never inside a name."""
    parts = [f"<span>{p}</span>" for p in re.findall(r"[^/]*/|[^/]+$", path)]
    parts += [f"<span>{tail}</span>"] if tail else []
    return f'<code class="p">{"<wbr>".join(parts)}</code>'


@pytest.fixture
def report(tmp_path, monkeypatch) -> dict:
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("a = 1\nb = 2\n")
    (tmp_path / "hostile.md").write_text(NOTES, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    options = ImportOptions(roots=["root"])
    result = importer.import_notes(["hostile.md"], options, tmp_path / "k.db", dry_run=True)
    return reports.report(result)


def test_html_escapes_fact_text_and_is_self_contained(report):
    html = reports.render(report, "html")
    assert "<script" not in html
    # a "/" in a fact's text is a break opportunity (<wbr>), as in a path
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/<wbr>script&gt; &amp; friends" in html
    # no network: no external resources, no scripts; the only URL is the SVG namespace
    assert re.findall(r"https?://[^\s\"']+", html) == ["http://www.w3.org/2000/svg"] * 2
    assert not re.search(r"<(link|img|iframe|object)\b|\bsrc=|@import|url\(", html)
    assert html.count("<svg") == 2


def test_html_holds_totals_charts_gone_merged_and_warnings(report):
    html = reports.render(report, "html")
    assert '<div class="card bad"><b>1</b>fact citing gone files</div>' in html
    assert (
        f"<td>{code('hostile.md:3:49')}</td><td>{code('src/gone.kt')}</td>"
        '<td class="hint"></td><td class="nw">k1</td>' in html
    )
    said = (
        "&lt;script&gt;alert(&#34;x&#34;)&lt;/<wbr>script&gt; &amp; friends live in"
        " src/<wbr>gone.kt"
    )
    assert (
        f'<td>{code("hostile.md:5")}</td><td>k1</td><td class="side">'
        f'{said}</td><td class="side">{said}</td><td class="n">1.00</td>' in html
    )
    # bars: area:hostile has 1 decision and 1 environment fact, scaled to the largest scope
    assert '<rect x="200" y="4" width="250.0" height="18" fill="#4e79a7">' in html
    assert "<title>area:hostile: 1 environment</title>" in html
    # citations per root: one anchor found in root 0; the gone path is cited twice
    assert "<title>0: root: 1</title>" in html
    assert "<title>gone (no root holds it): 2</title>" in html


def test_markdown_escapes_and_tables(report):
    md = reports.render(report, "markdown")
    assert "<script" not in md
    assert '&lt;script&gt;alert("x")&lt;/script&gt; &amp; friends live in src/gone.kt' in md
    assert "pipes \\| and \\*stars\\* and \\`ticks\\` stay text" in md
    assert "| hostile.md:3 | src/gone.kt |  | k1 |" in md  # no "moved?" hint: none given
    assert "| hostile.md:5 | k1 | 1.00 |" in md
    # every table row has as many cells as its header
    for block in md.split("\n\n"):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        if rows:
            width = len(re.split(r"(?<!\\)\|", rows[0]))
            assert all(len(re.split(r"(?<!\\)\|", r)) == width for r in rows)


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_import_cli_formats(tmp_path, fmt):
    (tmp_path / "n.md").write_text("+ a fact <script>\n")
    out = tmp_path / f"report.{fmt}"
    result = CliRunner().invoke(
        cli.main,
        [
            "import",
            str(tmp_path / "n.md"),
            "--root",
            str(tmp_path),
            "--store",
            str(tmp_path / "k.db"),
            "--format",
            fmt,
            "--output",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "a fact &lt;script&gt;" in out.read_text(encoding="utf-8")


def test_html_merged_repeats_side_by_side_moved_hints_and_fact_lines(tmp_path, monkeypatch):
    (tmp_path / "root/lib").mkdir(parents=True)
    (tmp_path / "root/lib/Moved.kt").write_text("class Moved\n")
    (tmp_path / "n.md").write_text(
        "+ the webhook handler retries failed deliveries three times TER-1\n"
        "+ The webhook handlers retried failed delivery three times TER-1\n"
        "+ the loader lives in src/Moved.kt\n"
    )
    monkeypatch.chdir(tmp_path)
    args = ["import", "n.md", "--root", "root", "--dry-run", "--format", "html"]
    html = CliRunner().invoke(cli.main, args).stdout
    assert (
        f'<tr><td>{code("n.md:2")}</td><td>k1</td><td class="side">The webhook handlers '
        'retried failed delivery three times TER-1</td><td class="side">the webhook handler '
        'retries failed deliveries three times TER-1</td><td class="n">1.00</td></tr>' in html
    )
    assert (
        f"<td>{code('n.md:3:23')}</td><td>{code('src/Moved.kt')}</td>"
        '<td class="hint">moved? lib/Moved.kt (the only file of that name)</td>' in html
    )
    assert '<th class="n">lines</th><th class="n">fact lines</th>' in html
    assert (
        f'<td><a href="n.md">{code("n.md")}</a></td><td class="nw">area:n</td>'
        '<td class="n">3</td><td class="n">3</td>' in html
    )


def test_counts_of_one_read_in_the_singular_in_every_import_report(tmp_path, monkeypatch):
    (tmp_path / "root/src").mkdir(parents=True)
    (tmp_path / "root/src/App.kt").write_text("class App\n")
    (tmp_path / "n.md").write_text("+ the loader lives in src/Gone.kt\n")
    monkeypatch.chdir(tmp_path)
    args = ["import", "n.md", "--root", "root", "--store", "k.db"]
    text = CliRunner().invoke(cli.main, args).stdout
    assert text.startswith("Imported into k.db: 1 fact added, 0 updated\n")
    assert "  citing gone files: 1 fact (1 citation); outside every root: 0;" in text
    html = CliRunner().invoke(cli.main, [*args, "--dry-run", "--format", "html"]).stdout
    assert "<b>1</b>file</div>" in html and "<b>1</b>fact</div>" in html
    assert "<b>1</b>fact citing gone files</div>" in html
    assert "Lines: 1 fact line, 0 continuations, 0 blank" in html
    assert "<b>0</b>warnings</div>" in html


def test_text_and_markdown_reports_give_the_moved_hint_check_gives(tmp_path, monkeypatch):
    (tmp_path / "root/lib").mkdir(parents=True)
    (tmp_path / "root/lib/Moved.kt").write_text("class Moved\n")
    (tmp_path / "n.md").write_text("+ the loader lives in src/Moved.kt\n+ x is in src/Nope.kt\n")
    monkeypatch.chdir(tmp_path)
    hint = "moved? lib/Moved.kt (the only file of that name)"
    args = ["import", "n.md", "--root", "root", "--dry-run"]
    text = CliRunner().invoke(cli.main, args).stdout
    assert f"Facts citing gone files\n  n.md:1: src/Moved.kt (k1); {hint}\n\n" in text
    assert "  n.md:2: src/Nope.kt (k2)\n" in text  # unresolved: no hint
    md = CliRunner().invoke(cli.main, [*args, "--format", "markdown"]).stdout
    assert (
        "| where | path | moved? | fact |\n| --- | --- | --- | --- |\n"
        f"| n.md:1 | src/Moved.kt | {hint} | k1 |\n" in md
    )
    checked = CliRunner().invoke(cli.main, ["check", "n.md", "--root", "root"]).stdout
    assert f"src/Moved.kt, which no root holds; {hint}" in checked


CODE = {
    "src/app.py": "def parse():\n    return 1\n",
    "src/b.py": "x = 1\n",
    "app/Pay.kt": "class ChargeRequest {\n  val a = 1\n}\n",
}
FACTS = (
    "+ parse lives in src/app.py:1-2\n"
    "+ b is in src/b.py\n"
    "+ charges go through ChargeRequest\n"
    "+ the loader lives in src/Gone.kt\n"
)


def stale_page(tmp_path, monkeypatch, *args) -> str:
    """The HTML report of notes imported again (``args`` added) into a store whose anchors
    were fingerprinted (``import --verify``), after ``src/b.py`` changed."""
    monkeypatch.chdir(tmp_path)
    repo = verified_checkout(tmp_path, CODE, FACTS)
    (repo / "src/b.py").write_text("x = 2\n")
    (tmp_path / "out").mkdir()
    out = ["--format", "html", "--output", "out/report.html"]
    r = run("import", "notes/facts.md", "--root", "repo", *out, *args)
    assert (r.exit_code, r.output) == (0, "")
    return (tmp_path / "out/report.html").read_text(encoding="utf-8")


def test_html_header_names_version_time_command_and_store(tmp_path, monkeypatch):
    before = datetime.now(UTC).replace(microsecond=0)
    html = stale_page(tmp_path, monkeypatch)
    after = datetime.now(UTC)
    assert f"<dt>brainmigrate</dt><dd>{__version__}</dd>" in html
    when = re.search(r'<dt>run at</dt><dd><time datetime="([^"]+)">\1</time></dd>', html)
    assert before <= datetime.strptime(when[1], "%Y-%m-%dT%H:%M:%S%z") <= after
    # no --store given: the command line names the store it wrote
    assert (
        "<dt>command</dt><dd><code>brainmigrate import --root repo --format html"
        " --output out/report.html --store know.db notes/facts.md</code></dd>" in html
    )
    assert "<dt>store</dt><dd><code>know.db</code></dd>" in html


def test_html_command_line_is_shell_quoted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my notes.md").write_text("+ a fact\n")
    r = run("import", "my notes.md", "--store", "a b.db", "--dry-run", "--format", "html")
    assert (
        "<code>brainmigrate import --store &#39;a b.db&#39; --dry-run --format html"
        " &#39;my notes.md&#39;</code>" in r.stdout
    )
    assert "<dt>store</dt><dd><code>a b.db</code> (dry run: not written)</dd>" in r.stdout


def test_html_facts_link_their_origin_and_list_their_anchors_and_stale_states(
    tmp_path, monkeypatch
):
    html = stale_page(tmp_path, monkeypatch)
    # the origin links the notes file (a local file has no #L<n> line anchors)
    origin = '<td><a href="../notes/facts.md">{}</a></td>'.format
    rest = '<td class="nw">area:facts</td><td class="nw">environment</td><td class="nw">active</td>'
    assert (
        f'<tr id="k1"><td class="nw">k1</td>{origin(code("notes/facts.md:1"))}{rest}'
        '<td class="state-fresh">fresh</td><td class="text">parse lives in src/<wbr>app.py:1-2'
        f'</td><td class="nw"></td><td><code>file</code> {code("src/app.py:1-2")}</td></tr>' in html
    )
    assert (
        f'<tr id="k2"><td class="nw">k2</td>{origin(code("notes/facts.md:2"))}{rest}'
        '<td class="stale">body changed: src/<wbr>b.py</td><td class="text">b is in src/<wbr>b.py'
        f'</td><td class="nw"></td><td><code>file</code> {code("src/b.py")}</td></tr>' in html
    )
    anchor = code("app/Pay.kt", "#ChargeRequest:1-3")
    assert f"<td><code>symbol</code> {anchor}</td></tr>" in html
    no_anchor = (
        f'<tr id="k4"><td class="nw">k4</td>{origin(code("notes/facts.md:4"))}{rest}<td></td>'
    )
    assert no_anchor in html
    assert "#L" not in html
    cards = re.search(r'<h2 id="stale">Stale states</h2>\n(.*?)\n<h2', html, re.S)[1]
    assert re.findall(r'<div class="card( bad)?"><b>(\d+)</b>([a-z ]+)</div>', cards) == [
        ("", "2", "fresh"),
        ("", "0", "moved"),
        (" bad", "1", "body changed"),
        ("", "0", "signature changed"),
        ("", "0", "declaration gone"),
        ("", "0", "file gone"),
        ("", "0", "unreachable"),
    ]
    assert "3 anchored facts of the store read again now, each in the root recorded" in cards


def test_html_says_why_it_shows_no_stale_states(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src/a.py").write_text("a = 1\n")
    (tmp_path / "n.md").write_text("+ a is in src/a.py\n")
    args = ["import", "n.md", "--root", ".", "--format", "html"]
    dry = run(*args, "--dry-run").stdout
    assert (
        '<h2 id="stale">Stale states</h2>\n<p class="muted">Dry run: no store was written, so no'
        " fingerprints to read again.</p>" in dry
    )
    assert "<th>stale state</th>" not in dry
    plain = run(*args).stdout
    assert '<p class="muted">The store holds no fingerprints: run brainmigrate verify' in plain
    assert "<th>stale state</th>" not in plain


def test_html_charts_scale_tables_scroll_and_a_dark_scheme_is_given(tmp_path, monkeypatch):
    html = stale_page(tmp_path, monkeypatch)
    assert not re.search(r'width="\d+"', html)  # no fixed width on a chart
    svgs = re.findall(r"<svg [^>]*>", html)
    assert len(svgs) == 2
    assert all(' class="chart" ' in s and "viewBox=" in s and "width=" not in s for s in svgs)
    assert "svg.chart { display: block; width: 100%; max-width: 760px; height: auto; }" in html
    assert html.count('<div class="scroll"><table>') == html.count("<table>") == 4
    assert ".scroll { max-width: 100%; overflow-x: auto; }" in html
    assert "@media (prefers-color-scheme: dark) {" in html
    assert '<meta name="color-scheme" content="light dark">' in html
    # still one self-contained file: the links are relative, the only URL the SVG namespace
    assert re.findall(r"https?://[^\s\"']+", html) == ["http://www.w3.org/2000/svg"] * 2
    assert not re.search(r"<(link|img|iframe|object|script)\b|\bsrc=|@import|url\(", html)


def test_html_stale_states_are_read_in_the_recorded_roots_as_stale_dry_run_reads_them(
    tmp_path, monkeypatch
):
    """Imported with --verify from two roots, the first moved away, then imported again
    with the second root only: the page's states are those of ``stale --dry-run`` (the
    moved root's anchors unreachable, not "file gone" in the root the import was given)."""
    from trees import committed, write

    monkeypatch.chdir(tmp_path)
    committed(tmp_path / "app", {"src/Pay.kt": "class Pay\n", "src/Hook.kt": "class Hook\n"})
    committed(tmp_path / "infra", {"deploy.yml": "a: 1\n"})
    write(
        tmp_path,
        {
            "notes/n.md": "+ payments live in src/Pay.kt\n+ hooks live in src/Hook.kt\n"
            "+ the deploy is deploy.yml\n"
        },
    )
    r = run("import", "notes", "--root", "app", "--root", "infra", "--verify")
    assert r.exit_code == 0, r.output
    (tmp_path / "app").rename(tmp_path / "app2")
    r = run("import", "notes", "--root", "infra", "--format", "html", "--output", "r.html")
    assert (r.exit_code, r.output) == (0, "")
    dry = run("stale", "--dry-run")
    assert (dry.exit_code, dry.stdout.splitlines()[-1]) == (
        0,
        "OK: checked 3, stale 0, unreachable 2 (dry run: nothing recorded)",
    )
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    cards = re.search(r"<h2[^>]*>Stale states</h2>\n(.*?)\n<h2", html, re.S)[1]
    assert re.findall(r'<div class="card( bad)?"><b>(\d+)</b>([a-z ]+)</div>', cards) == [
        ("", "1", "fresh"),
        ("", "0", "moved"),
        ("", "0", "body changed"),
        ("", "0", "signature changed"),
        ("", "0", "declaration gone"),
        ("", "0", "file gone"),
        ("", "2", "unreachable"),
    ]
    assert "each in the root recorded with its anchors (as <code>brainmigrate stale" in cards
    # each fact's state cell: unreachable with stale's reason (not marked stale), one fresh
    app = str(tmp_path / "app").replace("/", "/<wbr>")
    unreachable = f"<td>unreachable: root cannot be read: {app}</td>"
    assert html.count(unreachable) == 2
    assert html.count('<td class="state-fresh">fresh</td>') == 1
    assert '<td class="stale">' not in html


def test_html_fact_rows_and_sections_have_ids_and_the_files_table_links_each_notes_file(
    tmp_path, monkeypatch
):
    """``report.html#k2`` opens at fact k2's row, ``#stale`` at the stale states; the Files
    table links each notes file; every link resolves from the page's folder to a file."""
    html = stale_page(tmp_path, monkeypatch)
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    assert re.findall(r'<tr id="(k\d+)"><td class="nw">\1</td>', html) == ["k1", "k2", "k3", "k4"]
    assert re.findall(r'<h2 id="([a-z]+)">', html) == [
        "scopes",
        "roots",
        "gone",
        "merged",
        "warnings",
        "stale",
        "files",
        "facts",
    ]
    files = re.search(r'<h2 id="files">Files</h2>\n(.*?)\n<h2', html, re.S)[1]
    assert f'<tr><td><a href="../notes/facts.md">{code("notes/facts.md")}</a></td>' in files
    hrefs = re.findall(r'href="([^"]+)"', html)
    assert len(hrefs) == 5  # the file's row and its four facts' origins
    assert all((tmp_path / "out" / h).is_file() for h in hrefs)


def test_html_links_no_notes_file_that_is_not_there(tmp_path, monkeypatch):
    """Notes read from standard input are named ``-``, no file: the page names them and
    links nothing."""
    monkeypatch.chdir(tmp_path)
    args = ["import", "-", "--dry-run", "--format", "html"]
    html = CliRunner().invoke(cli.main, args, input="+ a fact\n").stdout
    assert f'<tr><td>{code("-")}</td><td class="nw">area:stdin</td>' in html
    assert f'<tr id="k1"><td class="nw">k1</td><td>{code("-:1")}</td>' in html
    assert "<a " not in html


def test_html_says_stale_s_error_when_no_recorded_root_can_be_read(tmp_path, monkeypatch):
    """Every anchor's recorded root gone: ``stale --dry-run`` exits 2 with its message, and
    the page shows that message in place of the states (the import itself succeeds)."""
    from trees import write

    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"app/src/Pay.kt": "class Pay\n", "infra/x.yml": "a: 1\n"})
    write(tmp_path, {"n.md": "+ payments live in src/Pay.kt\n"})
    assert run("import", "n.md", "--root", "app", "--verify").exit_code == 0
    (tmp_path / "app").rename(tmp_path / "app2")
    r = run("import", "n.md", "--root", "infra", "--format", "html", "--output", "r.html")
    assert (r.exit_code, r.output) == (0, "")
    said = (
        "no anchor could be read in the roots recorded with them (app): 1 anchored fact"
        " unreachable; check --root"
    )
    dry = run("stale", "--dry-run")
    assert (dry.exit_code, dry.stderr) == (2, f"brainmigrate: error: {said}\n")
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert (
        f'<h2 id="stale">Stale states</h2>\n<p class="muted">Stale states not read: {said}</p>'
        in html
    )
    assert "<th>stale state</th>" not in html
