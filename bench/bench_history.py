"""What a git history costs a warm ``check``: the same tree and notes checked as a plain
folder and as a git checkout whose history has ``--commits`` commits (made with ``git
fast-import``: files added, edited, renamed and deleted, a side branch merged every 100
commits), warm caches, CPU time of the child (user + sys), paired and alternating,
medians. Also the cold first run in the checkout (its history read and kept).

Bar (issue 27, "History once"): a history of 5,000 commits adds at most 20% to a warm
``check`` over the same tree without ``.git`` (``git/plain <= 1.20``).

    python bench/bench_history.py [--commits 5000] [--files 600] [--notes 300] [--repeat 7]
        [--gone-every 5]

A plain tree gives no rename hints, so a gone path costs it the closest-name search
instead; ``--gone-every 0`` (only present paths cited) measures the history alone.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BAR = 1.20


def fast_import_stream(commits: int, files: int, seed: int = 1) -> tuple[bytes, dict, list]:
    """A ``git fast-import`` stream of ``commits`` commits on ``main`` over about
    ``files`` files; the files at the end, and every path renamed or deleted on the way
    (old path, new path or "")."""
    rng = random.Random(seed)
    tree: dict[str, str] = {}
    gone: list[tuple[str, str]] = []
    out: list[bytes] = []
    counter = [0]

    def data(text: str) -> bytes:
        raw = text.encode()
        return b"data %d\n%s\n" % (len(raw), raw)

    def new_path(folder: str | None = None) -> str:
        counter[0] += 1
        folder = folder or f"pkg{rng.randrange(max(1, files // 30))}/mod{rng.randrange(6)}"
        return f"{folder}/file_{counter[0]}.py"

    def content(path: str, n: int) -> str:
        return "".join(f"# {path} line {i} {rng.random():.6f}\n" for i in range(n))

    def commit(ref: str, mark: int, parents: list[int], ops: list[bytes], when: int) -> None:
        out.append(b"commit refs/heads/%s\nmark :%d\n" % (ref.encode(), mark))
        out.append(b"committer Bench <bench@example.com> %d +0000\n" % when)
        out.append(data(f"commit {mark}"))
        if parents:
            out.append(b"from :%d\n" % parents[0])
        for p in parents[1:]:
            out.append(b"merge :%d\n" % p)
        out.extend(ops)
        out.append(b"\n")

    def put(path: str, text: str) -> bytes:
        return b"M 100644 inline %s\n%s" % (path.encode(), data(text))

    start, mark, last = 1_600_000_000, 0, 0
    ops = []
    for _ in range(files):
        p = new_path()
        tree[p] = content(p, 20)
        ops.append(put(p, tree[p]))
    mark += 1
    commit("main", mark, [], ops, start)
    last = mark
    i = 1
    while i < commits:
        if i % 100 == 99 and i + 4 < commits:  # a side branch of three commits, merged
            side_tree: dict[str, str] = {}
            parent = last
            folder = f"feature{i}"
            for step in range(3):
                mark += 1
                if step == 1:
                    old = next(iter(side_tree))
                    new = old.replace("file_", "moved_")
                    side_tree[new] = side_tree.pop(old)
                    ops = [b"R %s %s\n" % (old.encode(), new.encode())]
                else:
                    p = new_path(folder)
                    side_tree[p] = content(p, 10)
                    ops = [put(p, side_tree[p])]
                commit(f"side{i}", mark, [parent], ops, start + i * 60 + step)
                parent = mark
            mark += 1
            ops = [put(p, t) for p, t in side_tree.items()]
            tree.update(side_tree)
            commit("main", mark, [last, parent], ops, start + i * 60 + 30)
            last = mark
            i += 4
            continue
        roll = rng.random()
        paths = sorted(tree)
        if roll < 0.12 and len(tree) > files // 2:  # rename
            old = rng.choice(paths)
            new = new_path()
            tree[new] = tree.pop(old)
            gone.append((old, new))
            ops = [b"R %s %s\n" % (old.encode(), new.encode())]
        elif roll < 0.20 and len(tree) > files // 2:  # delete
            old = rng.choice(paths)
            del tree[old]
            gone.append((old, ""))
            ops = [b"D %s\n" % old.encode()]
        elif roll < 0.32:  # add
            p = new_path()
            tree[p] = content(p, 15)
            ops = [put(p, tree[p])]
        else:  # edit one to three files
            ops = []
            for p in rng.sample(paths, min(len(paths), rng.randint(1, 3))):
                tree[p] = tree[p] + f"# edit {i}\n"
                ops.append(put(p, tree[p]))
        mark += 1
        commit("main", mark, [last], ops, start + i * 60)
        last = mark
        i += 1
    return b"".join(out), tree, gone


def notes_text(tree: dict, gone: list, lines: int, seed: int = 1, every: int = 5) -> str:
    """Markdown notes of about ``lines`` lines citing files that are there and (one line
    in ``every``; 0: none) files the history renamed or deleted."""
    rng = random.Random(seed)
    here = sorted(tree)
    out = ["# Project notes", ""]
    for n in range(lines):
        if every and n % every == every - 1 and gone:
            old, _new = rng.choice(gone)
            out.append(f"- The old module `{old}` handled step {n}.")
        else:
            out.append(f"- See `{rng.choice(here)}` for step {n}.")
    return "\n".join(out) + "\n"


def make_trees(
    work: Path, commits: int, files: int, notes: int, every: int = 5
) -> tuple[Path, Path]:
    """``(checkout, plain)``: a git checkout of the made history with ``CLAUDE.md`` and
    the same files as a plain folder."""
    repo = work / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    stream, tree, gone = fast_import_stream(commits, files)
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=stream, check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-f", "main"], check=True)
    (repo / "CLAUDE.md").write_text(notes_text(tree, gone, notes, every=every), encoding="utf-8")
    plain = work / "plain"
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
    return repo, plain


def check_cpu(tree: Path, cache: Path) -> float:
    """CPU seconds (user + sys) of one ``check`` of ``tree``'s notes against it."""
    cmd = [sys.executable, "-m", "brainmigrate", "check", "--isolated", "--no-progress"]
    cmd += ["--cache-dir", str(cache), "--root", str(tree), str(tree / "CLAUDE.md")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"check failed in {tree}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=5000)
    parser.add_argument("--files", type=int, default=600)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--gone-every",
        type=int,
        default=5,
        help="one notes line in N cites a path the history renamed or deleted (0: none)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        work = Path(tmp)
        repo, plain = make_trees(work, args.commits, args.files, args.notes, args.gone_every)
        cold = check_cpu(repo, work / "cache-git")
        check_cpu(plain, work / "cache-plain")
        git_runs, plain_runs = [], []
        for _ in range(args.repeat):
            plain_runs.append(check_cpu(plain, work / "cache-plain"))
            git_runs.append(check_cpu(repo, work / "cache-git"))
        g, p = statistics.median(git_runs), statistics.median(plain_runs)
        ratio = g / p if p else float("inf")
        print(f"history: {args.commits} commits, {args.files} files, {args.notes} notes lines")
        print(f"cold check in the checkout: {cold * 1000:.0f} ms CPU")
        print(f"warm check, plain tree:     {p * 1000:.0f} ms CPU (median of {args.repeat})")
        print(f"warm check, git checkout:   {g * 1000:.0f} ms CPU")
        verdict = "met" if ratio <= BAR else "NOT met"
        print(f"git/plain = {ratio:.2f} (bar <= {BAR:.2f}: {verdict})")


if __name__ == "__main__":
    main()
