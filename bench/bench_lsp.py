"""Time what ``brainmigrate server`` does with one big notes buffer: the check
(``notesview.analyse``), then the diagnostics and the code actions of every line made of
its ``View`` (``serving.lsp.diagnostics``, ``serving.lsp.code_actions``), for buffers of
``--lines`` lines, each citing a gone path and a kept one. The last two were quadratic
(a linear scan of the spots per finding); they should grow as the check does.

    python bench/bench_lsp.py [--lines 5000 20000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from brainmigrate.config import Settings
from brainmigrate.serving import lsp, notesview


def buffer(lines: int) -> str:
    return "".join(f"- fact {i} cites src/gone{i % 50}.py and src/keep.py\n" for i in range(lines))


def best(repeat: int, work) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "src").mkdir()
        (root / "src" / "keep.py").write_text("a\n")
        path = os.path.join(folder, "notes", "CLAUDE.md")
        settings = Settings(roots=(folder,), cache_dir=os.path.join(folder, ".cache"))
        for n in args.lines:
            print(measure(path, settings, n, args.repeat))


def measure(path: str, settings: Settings, n: int, repeat: int) -> str:
    """The times of one buffer of ``n`` lines, as a line of text."""
    text = buffer(n)
    took, view = best(repeat, lambda: notesview.analyse(path, text, settings))
    lines = lsp.Buffer(text)
    shown, _ = best(repeat, lambda: lsp.diagnostics(view, lines))
    acted, _ = best(repeat, lambda: lsp.code_actions(view, "file:///x", lines, 0, n))
    return (
        f"{n} lines: check {took:.2f} s, diagnostics {shown:.2f} s,"
        f" code actions {acted:.2f} s ({len(view.findings)} findings)"
    )


if __name__ == "__main__":
    main()
