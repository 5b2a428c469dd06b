"""The HTML audit page as headless Chromium renders it, at 600 px and 1400 px wide: nothing
runs past the window's right edge (measured in the page and seen in a screenshot), the
narrow columns (ids, kinds, statuses, where and origin paths) never break inside a word
while a wide table scrolls in its box, and the dark scheme keeps text readable. Skipped,
with the reason, when no Chromium is installed (CI installs it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from clirun import cli
from stored import verified_checkout


def browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


pytestmark = pytest.mark.skipif(browser() is None, reason="no headless Chromium installed")

LONG = "src/" + "very_long_folder_name_without_any_break/" * 3 + "AndAFileNamedAtLength.kt"
CODE = {
    "src/app.py": "def parse():\n    return 1\n",
    "src/b.py": "x = 1\n",
    LONG: "class AndAFileNamedAtLength\n",
}
NOTES = (
    "+ parse lives in src/app.py:1-2, see also src/b.py\n"
    f"+ the long one is {LONG}\n"
    f"+ <script>alert(1)</script> the loader lives in {LONG.replace('.kt', 'Gone.kt')}\n"
    "~ a pattern in src/gone/OldLoader.kt with | pipes | and *stars*\n"
)
#: What the probe script puts in the page before it is dumped: the widths it measures and
#: the colours text is drawn in over the background it is drawn on.
PROBE = """<script>
const d = document.documentElement;
const bg = (e) => {
  for (; e; e = e.parentElement) {
    const c = getComputedStyle(e).backgroundColor;
    if (c !== "rgba(0, 0, 0, 0)" && c !== "transparent") return c;
  }
  return getComputedStyle(d).backgroundColor;
};
const pair = (sel, prop) => {
  const e = document.querySelector(sel);
  return e ? [getComputedStyle(e)[prop], bg(e)] : null;
};
// the characters each line of e's text breaks after ("/" or " "), and its number of lines
const lines = (e) => {
  const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
  const r = document.createRange();
  const after = [];
  let top = null, prev = null, n = 0;
  for (let t; (t = walk.nextNode()); ) {
    for (let i = 0; i < t.length; i++) {
      const ch = t.data[i];
      r.setStart(t, i);
      r.setEnd(t, i + 1);
      const box = r.getClientRects()[0];
      if (ch.trim() && box && box.width > 0) {
        const y = Math.round(box.top);
        if (top === null || y > top + 2) {
          n += 1;
          if (top !== null) after.push(prev);
        }
        top = y;
      }
      prev = ch;
    }
  }
  return {n, after};
};
const column = (table, name) => {
  const heads = [...table.rows[0].cells].map((c) => c.textContent);
  const i = heads.indexOf(name);
  return [...table.rows].slice(1).map((row) => row.cells[i]);
};
const tableOf = (title) => {
  const h = [...document.querySelectorAll("h2")].find((e) => e.textContent === title);
  return h && h.nextElementSibling.querySelector("table");
};
const facts = tableOf("Facts");
const measure = (cells) => cells.map((c) => [c.textContent, lines(c)]);
const out = {
  cells: {
    id: measure(column(facts, "id")),
    kind: measure(column(facts, "kind")),
    status: measure(column(facts, "status")),
    task: measure(column(facts, "task")),
    origin: measure(column(facts, "origin")),
    where: measure(["Facts citing gone files", "Merged repeats", "Warnings"].flatMap(
      (t) => (tableOf(t) ? column(tableOf(t), "where") : []))),
  },
  textWidth: Math.min(...column(facts, "text").map((c) => c.getBoundingClientRect().width)),
  rem: parseFloat(getComputedStyle(d).fontSize),
  box: [facts.parentElement.clientWidth, facts.parentElement.scrollWidth],
  inner: innerWidth,
  scroll: d.scrollWidth,
  right: Math.max(...[...document.querySelectorAll("body *")].filter(
    (e) => !e.closest(".scroll")).map((e) => e.getBoundingClientRect().right)),
  charts: [...document.querySelectorAll("svg")].map((e) => e.getBoundingClientRect().right),
  dark: matchMedia("(prefers-color-scheme: dark)").matches,
  text: {
    body: pair("body", "color"), muted: pair(".muted", "color"), th: pair("th", "color"),
    link: pair("a", "color"), hint: pair("td.hint", "color"), chart: pair("svg text", "fill"),
    bad: pair(".card.bad b", "color"),
  },
};
const pre = document.createElement("pre");
pre.id = "probe";
pre.textContent = JSON.stringify(out);
document.body.append(pre);
</script>"""


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The audit page of real notes (long unbroken paths, a stale fact, gone citations)
    imported again into a fingerprinted store, written to ``out/report.html``."""
    base = tmp_path_factory.mktemp("browser")
    here = os.getcwd()
    os.chdir(base)
    try:
        repo = verified_checkout(base, CODE, NOTES)
        (repo / "src/b.py").write_text("x = 2\n")
        (base / "out").mkdir()
        r = cli(
            "import", "notes", "--root", "repo", "--format", "html", "--output", "out/report.html"
        )
        assert r.exit_code == 0, r.output
    finally:
        os.chdir(here)
    return base / "out/report.html"


SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="module")
def samples_page(tmp_path_factory) -> Path:
    """The audit page of the repository's samples (29 facts, four notes files, two roots),
    imported with --verify and then again with ``--format html``."""
    base = tmp_path_factory.mktemp("samples")
    shutil.copytree(SAMPLES, base / "samples")
    here = os.getcwd()
    os.chdir(base)
    try:
        args = ["samples/notes", "--root", "samples/roots/app", "--root", "samples/roots/infra"]
        args += ["--cache-dir", "cache"]
        assert cli("import", *args, "--verify").exit_code == 0
        r = cli("import", *args, "--format", "html", "--output", "r.html")
        assert r.exit_code == 0, r.output
    finally:
        os.chdir(here)
    return base / "r.html"


def chromium(page: Path, width: int, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={width},1400",
            *flags,
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=90,
    )


def probed(page: Path, width: int, *flags: str) -> dict:
    """What ``PROBE`` measures in a copy of ``page`` laid out ``width`` px wide."""
    copy = page.with_name(f"probe-{width}{'-'.join(flags)}.html")
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"))
    dom = chromium(copy, width, "--dump-dom", *flags).stdout.decode()
    return json.loads(re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)[1])


def png_rows(data: bytes) -> list[list[bytes]]:
    """The pixels of an 8-bit, non-interlaced RGB or RGBA PNG, row by row (RGB each)."""
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
    rows = []
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
        rows.append([bytes(line[i : i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return rows


def luminance(css: str) -> float:
    """The relative luminance (WCAG 2) of a CSS ``rgb(…)``/``rgba(…)`` colour."""
    r, g, b = (int(v) / 255 for v in re.findall(r"[\d.]+", css)[:3])
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(fg: str, bg: str) -> float:
    hi, lo = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("width", [600, 1400])
def test_nothing_runs_past_the_window_at(page, width):
    got = probed(page, width)
    assert got["inner"] == width
    assert got["scroll"] <= width  # the page itself never scrolls sideways
    assert got["right"] <= width  # and nothing outside a table's scroll box is cut
    assert len(got["charts"]) == 2 and max(got["charts"]) <= width


@pytest.mark.parametrize("width", [600, 1400])
def test_the_screenshot_right_edge_is_background_at(page, width, tmp_path):
    shot = tmp_path / "shot.png"
    chromium(page, width, f"--screenshot={shot}")
    rows = png_rows(shot.read_bytes())
    assert len(rows[0]) == width
    edge = {px for row in rows for px in row[-6:]}
    assert edge == {b"\xff\xff\xff"}  # only the page's white: no bar, text or table cut
    seen = {px for row in rows for px in row}
    assert bytes.fromhex("e15759") in seen  # the red "gone" bar is drawn
    assert bytes.fromhex("f28e2b") in seen  # and the environment facts' bar


@pytest.mark.parametrize("width", [600, 1400])
@pytest.mark.parametrize("which", ["page", "samples_page"])
def test_narrow_columns_never_break_inside_a_word_at(which, width, request):
    """Ids, kinds, statuses and task ids are one line each; where and origin paths break
    only after a "/"; the fact text keeps at least 16rem and the table scrolls in its box
    when it is wider than the window (the samples' at 600 px) instead of squeezing them."""
    got = probed(request.getfixturevalue(which), width)
    cells = got["cells"]
    assert len(cells["id"]) == (4 if which == "page" else 29)
    assert cells["id"][-1][0] == ("k4" if which == "page" else "k29")
    for name in ("id", "kind", "status", "task"):
        assert [c for c in cells[name] if c[1]["n"] > 1] == [], name
    for name in ("origin", "where"):
        assert cells[name], name
        assert [c for c in cells[name] if set(c[1]["after"]) - {"/"}] == [], name
    assert got["textWidth"] >= 16 * got["rem"]
    box, wide = got["box"]
    assert got["scroll"] <= width  # the page never scrolls sideways: the table's box does
    if which == "samples_page":
        assert (wide > box) == (width == 600)


def test_dark_scheme_text_is_readable(page):
    got = probed(page, 600, "--force-dark-mode")
    assert got["dark"] is True
    body_fg, body_bg = got["text"]["body"]
    assert luminance(body_bg) < 0.02  # a dark page, not a light one with dark-mode hints
    assert None not in got["text"].values()  # every kind of text is on the page
    for name, (fg, bg) in got["text"].items():
        assert contrast(fg, bg) >= 4.5, (name, fg, bg)  # WCAG AA for normal text
    assert got["scroll"] <= 600


def test_light_scheme_text_is_readable(page):
    got = probed(page, 1400)
    assert got["dark"] is False
    assert luminance(got["text"]["body"][1]) == 1.0
    assert None not in got["text"].values()
    for name, (fg, bg) in got["text"].items():
        assert contrast(fg, bg) >= 4.5, (name, fg, bg)
