"""The declaration index built in a pool of forked processes (issue 14): the same index
and cache bytes as one process, errors raised as one process raises them, one process when
only one CPU is usable, no pool for a small build."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

import brainmigrate.codeindex.parse as parse_module
from brainmigrate.codeindex import CodeIndex, parallel

REPO = Path(__file__).resolve().parent.parent
#: A real tree: this project's own sources, tests and samples (Python, Kotlin, Go, ...).
REAL = REPO


def built(root: Path, cache: Path, workers: int):
    idx = CodeIndex(root, cache_dir=cache, workers=workers)
    summary = idx.build()
    blob = idx.cache_path.read_bytes()
    return idx, summary, blob


@pytest.fixture
def two_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool for any build of more than one file, as on a machine of two CPUs."""
    monkeypatch.setattr(parse_module, "POOL_THRESHOLD", 1)
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)


def test_pool_build_equals_in_process_build_on_a_real_tree(tmp_path: Path, two_cpus) -> None:
    serial, s_sum, s_blob = built(REAL, tmp_path / "serial", workers=1)
    pooled, p_sum, p_blob = built(REAL, tmp_path / "pooled", workers=2)
    assert p_sum.parsed == s_sum.parsed > 100
    # Same entries in the same order; a file changed less than 2 s before one build and
    # not the other is marked racy in one only (cache.RACY_NS): compare without that mark.
    assert list(pooled._entries) == list(serial._entries)
    assert {p: (*e[:2], *e[3:]) for p, e in pooled._entries.items()} == {
        p: (*e[:2], *e[3:]) for p, e in serial._entries.items()
    }
    if not any(e[2] for e in (*serial._entries.values(), *pooled._entries.values())):
        assert p_blob == s_blob
    ignore = {"seconds", "cache_path"}
    assert {k: v for k, v in p_sum.to_dict().items() if k not in ignore} == {
        k: v for k, v in s_sum.to_dict().items() if k not in ignore
    }
    for name in ("CodeIndex", "main", "Declaration"):
        assert pooled.lookup(name) == serial.lookup(name)


def test_byte_groups_cover_every_file_once_largest_first() -> None:
    sizes = [5, 900, 1, 1, 300, 0, 7, 900]
    groups = parse_module.byte_groups(sizes, 4)
    assert sorted(i for g in groups for i in g) == list(range(len(sizes)))
    assert groups[0] == [1] and groups[1] == [7]  # a large file is a task of its own
    assert parse_module.byte_groups([], 4) == []


def _failing_extract(real):
    def extract(data: bytes, language: str, **options):
        if b"BOOM" in data:
            raise ValueError("grammar gave up")
        return real(data, language, **options)

    return extract


def test_an_error_in_a_worker_is_raised_as_in_one_process(
    tmp_path: Path, two_cpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for i in range(8):
        (root / f"m{i}.py").write_text(f"class C{i}:\n    pass\n")
    (root / "m5.py").write_text("BOOM = 1\n")
    monkeypatch.setattr(parse_module, "extract_file", _failing_extract(parse_module.extract_file))
    for workers in (1, 2):
        idx = CodeIndex(root, cache_dir=tmp_path / f"c{workers}", workers=workers)
        with pytest.raises(ValueError, match="^grammar gave up$"):
            idx.build()
        assert not (tmp_path / f"c{workers}").exists()  # no cache written


def test_a_worker_that_dies_fails_the_build_instead_of_hanging(
    tmp_path: Path, two_cpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for i in range(8):
        (root / f"m{i}.py").write_text(f"class C{i}:\n    pass\n")
    parent = os.getpid()
    real = parse_module.extract_file

    def dying(data: bytes, language: str, **options):
        if os.getpid() != parent and b"C3" in data:
            os._exit(3)
        return real(data, language, **options)

    monkeypatch.setattr(parse_module, "extract_file", dying)
    with pytest.raises(BrokenProcessPool):
        CodeIndex(root, cache_dir=tmp_path / "c", workers=2).build()
    assert not (tmp_path / "c").exists()


def test_cli_reports_a_worker_error_without_a_traceback(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for i in range(8):
        (root / f"m{i}.py").write_text(f"class C{i}:\n    pass\n")
    (root / "m5.py").write_text("BOOM = 1\n")
    code = (
        "import sys\n"
        "import brainmigrate.codeindex.parse as m\n"
        "from brainmigrate.codeindex import parallel\n"
        "m.POOL_THRESHOLD = 1\n"
        "parallel.usable_cpus = lambda: 2\n"
        "real = m.extract_file\n"
        "def extract(data, language, **options):\n"
        "    if b'BOOM' in data:\n"
        "        raise ValueError('grammar gave up')\n"
        "    return real(data, language, **options)\n"
        "m.extract_file = extract\n"
        "from brainmigrate.__main__ import run\n"
        f"sys.argv = ['brainmigrate', 'index', '--root', {str(root)!r}, '--no-progress',"
        f" '--cache-dir', {str(tmp_path / 'c')!r}]\n"
        "run()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "BRAINMIGRATE_DEBUG"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "internal error: ValueError: grammar gave up" in done.stderr


def test_one_usable_cpu_builds_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parse_module, "POOL_THRESHOLD", 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)

    def no_pool(*args, **kwargs):
        raise AssertionError("a pool with one usable CPU")

    monkeypatch.setattr(parallel, "run_ordered", no_pool)
    summary = CodeIndex(REPO / "samples", cache_dir=tmp_path / "c", workers=2).build()
    assert summary.parsed > 1


def test_a_small_build_imports_no_pool(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from brainmigrate.codeindex import CodeIndex\n"
        f"s = CodeIndex('samples/roots/app', cache_dir={str(tmp_path / 'c')!r}).build()\n"
        "print(s.parsed, sorted(m for m in ('multiprocessing', 'concurrent.futures',"
        " 'brainmigrate.codeindex.parallel') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    parsed, loaded = done.stdout.split(" ", 1)
    assert int(parsed) > 0 and loaded.strip() == "[]"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_end_with_a_killed_parent(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for i in range(8):
        (root / f"m{i}.py").write_text(f"class C{i}:\n    pass\n")
    pids = tmp_path / "pids"
    code = (
        "import os, time\n"
        "import brainmigrate.codeindex.parse as m\n"
        "from brainmigrate.codeindex import CodeIndex, parallel\n"
        "m.POOL_THRESHOLD = 1\n"
        "parallel.usable_cpus = lambda: 2\n"
        "def slow(data, language, **options):\n"
        f"    with open({str(pids)!r}, 'a') as fh:\n"
        "        fh.write(f'{os.getpid()}\\n')\n"
        "    time.sleep(60)\n"
        "m.extract_file = slow\n"
        f"CodeIndex({str(root)!r}, use_cache=False).build()\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=REPO)
    try:
        for _ in range(200):
            if pids.exists() and len(pids.read_text().split()) >= 2:
                break
            time.sleep(0.05)
        workers = [int(p) for p in pids.read_text().split()]
    finally:
        parent.kill()
        parent.wait()
    for _ in range(100):
        alive = [p for p in workers if _running(p)]
        if not alive:
            break
        time.sleep(0.05)
    assert alive == []


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper is not)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
