"""The import report as Markdown and as a self-contained HTML audit page (reports/templates)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib

import pytest
from click.testing import CliRunner

from brainmigrate import cli, importer, reports
from brainmigrate.read.run import ImportOptions

NOTES = """\
# hostile

+ <script>alert("x")</script> & friends live in src/gone.kt <!-- 2026-01-02 03:04 r1 -->
~ pipes | and *stars* and `ticks` stay text, see src/app.py:2
+ <script>alert("x")</script> & friends live in src/gone.kt
"""


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
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; friends" in html
    # no network: no external resources, no scripts; the only URL is the SVG namespace
    assert re.findall(r"https?://[^\s\"']+", html) == ["http://www.w3.org/2000/svg"] * 2
    assert not re.search(r"<(link|img|iframe|object)\b|\bsrc=|@import|url\(", html)
    assert html.count("<svg") == 2


def test_html_holds_totals_charts_gone_merged_and_warnings(report):
    html = reports.render(report, "html")
    assert '<div class="card bad"><b>1</b>fact citing gone files</div>' in html
    assert (
        "<td><code>hostile.md:3:49</code></td><td><code>src/gone.kt</code></td>"
        '<td class="hint"></td><td>k1</td>' in html
    )
    said = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; friends live in src/gone.kt"
    assert (
        '<td><code>hostile.md:5</code></td><td>k1</td><td class="side">'
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
        '<tr><td><code>n.md:2</code></td><td>k1</td><td class="side">The webhook handlers '
        'retried failed delivery three times TER-1</td><td class="side">the webhook handler '
        'retries failed deliveries three times TER-1</td><td class="n">1.00</td></tr>' in html
    )
    assert (
        "<td><code>n.md:3:23</code></td><td><code>src/Moved.kt</code></td>"
        '<td class="hint">moved? lib/Moved.kt (the only file of that name)</td>' in html
    )
    assert '<th class="n">lines</th><th class="n">fact lines</th>' in html
    assert (
        '<td><code>n.md</code></td><td>area:n</td><td class="n">3</td><td class="n">3</td>' in html
    )


def browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def png_pixels(data: bytes) -> set[bytes]:
    """The distinct pixels of an 8-bit, non-interlaced RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    seen: set[bytes] = set()
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        seen.update(bytes(line[i : i + bpp]) for i in range(0, stride, bpp * 7))
        prev = line
    return seen


@pytest.mark.skipif(browser() is None, reason="no headless Chromium installed")
def test_html_renders_in_headless_chromium(report, tmp_path):
    page = tmp_path / "audit.html"
    page.write_text(reports.render(report, "html"), encoding="utf-8")
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=800,600",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    colours = png_pixels(shot.read_bytes())
    assert len(colours) > 5  # text, cards and chart bars, not a blank page
    assert any(p[:3] == bytes.fromhex("e15759") for p in colours)  # a red "gone" bar


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
