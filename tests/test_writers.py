"""The one writer (``brainmigrate.writers``) on real files: ``check --fix`` writes only
under the PATHS given, never follows a symlink swapped in, never loses an edit made while
it runs, keeps hard links, mode and owner, refuses read-only notes, and leaves no
temporary file behind, also when killed; a baseline a configuration file names stays in
that file's folder; the next run of a writing command removes what a killed one left.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from clirun import cli
from trees import renamed

from brainmigrate import fix, rewrites, writers

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

OLD = b"+ see src/old.py for the loader\n+ and src/old.py:3 again\n"
NEW = b"+ see src/new.py for the loader\n+ and src/new.py:3 again\n"
FIX = ("check", "notes", "--root", "repo", "--fix", "--isolated")
CHANGED = (
    "brainmigrate: note: notes/team.md: changed on disk since it was read; left alone,"
    " run --fix again"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """``tmp_path`` (the current folder) with ``repo`` (src/old.py renamed to src/new.py in
    git) and ``notes/team.md`` citing the old path twice."""
    renamed(tmp_path / "repo", "".join(f"x{i} = {i}\n" for i in range(9)))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/team.md").write_bytes(OLD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".bm" in p.name and p.name.endswith(".tmp"))


def note_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("brainmigrate: note:")]


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


# ------------------------------------------------------------------------ where it writes


def test_a_symlink_in_the_notes_folder_leading_outside_is_not_written(project):
    outside = project / "other-project"
    outside.mkdir()
    (outside / "theirs.md").write_bytes(OLD)
    (project / "notes/link.md").symlink_to("../other-project/theirs.md")
    r = cli(*FIX)
    assert r.exit_code == 1, r.output
    assert (outside / "theirs.md").read_bytes() == OLD
    assert (project / "notes/link.md").is_symlink()
    assert (project / "notes/team.md").read_bytes() == NEW
    assert note_lines(r.stderr) == [
        f"brainmigrate: note: notes/link.md: a symlink to {outside / 'theirs.md'}, outside the"
        " paths given; left alone (replace the symlink by the file, or pass its target as a"
        " PATH)"
    ]
    left = [ln for ln in r.stderr.splitlines() if ln.startswith("notes/link.md:")]
    assert left == [
        "notes/link.md:1:7: left src/old.py: the file leads outside the paths given",
        "notes/link.md:2:7: left src/old.py: the file leads outside the paths given",
    ]


def test_a_symlink_given_as_a_path_is_left_alone_and_its_target_given_is_written(project):
    """A symlink named as a PATH that leads out of its folder is left alone, as one met in
    a folder PATH is (issue 29); the user sends ``--fix`` there by naming its target."""
    outside = project / "elsewhere"
    outside.mkdir()
    (outside / "a.md").write_bytes(OLD)
    (project / "notes/link.md").symlink_to("../elsewhere/a.md")
    r = cli("check", "notes/link.md", "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 1, r.output
    assert (outside / "a.md").read_bytes() == OLD
    assert "outside the paths given; left alone" in r.stderr
    assert (project / "notes/link.md").is_symlink()
    (outside / "a.md").write_bytes(OLD)
    r = cli("check", "notes", "elsewhere", "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 0, r.output
    assert (outside / "a.md").read_bytes() == NEW


def _swapped_after_plan(project: Path, monkeypatch) -> Path:
    """``notes/sub/a.md`` and ``outside/a.md`` (both ``OLD``), and ``notes/sub`` swapped for
    a symlink to ``outside`` once the fixes are planned; returns ``outside``."""
    (project / "notes/sub").mkdir()
    (project / "notes/sub/a.md").write_bytes(OLD)
    outside = project / "outside"
    outside.mkdir()
    (outside / "a.md").write_bytes(OLD)
    real = fix.plan_fixes

    def then_swapped(*args, **kwargs):
        planned = real(*args, **kwargs)
        os.rename(project / "notes/sub", project / "sub.moved")
        os.symlink(outside, project / "notes/sub")
        return planned

    monkeypatch.setattr(fix, "plan_fixes", then_swapped)
    return outside


def test_a_folder_swapped_for_a_symlink_between_plan_and_apply_sends_nothing_outside(
    project, monkeypatch
):
    outside = _swapped_after_plan(project, monkeypatch)
    r = cli(*FIX)
    assert (outside / "a.md").read_bytes() == OLD
    assert (project / "sub.moved/a.md").read_bytes() == OLD
    assert temp_files(outside) == [] and temp_files(project / "sub.moved") == []
    assert (project / "notes/team.md").read_bytes() == NEW
    assert note_lines(r.stderr) == [
        "brainmigrate: note: notes/sub/a.md: its folder changed since it was read (a symlink"
        " or no folder there now); left alone, run --fix again"
    ]


def test_the_path_given_swapped_for_a_symlink_writes_the_folder_that_was_read(project, monkeypatch):
    outside = project / "outside"
    outside.mkdir()
    (outside / "team.md").write_bytes(OLD)
    real = fix.plan_fixes

    def then_swapped(*args, **kwargs):
        planned = real(*args, **kwargs)
        os.rename(project / "notes", project / "notes.moved")
        os.symlink(outside, project / "notes")
        return planned

    monkeypatch.setattr(fix, "plan_fixes", then_swapped)
    cli(*FIX)
    assert (outside / "team.md").read_bytes() == OLD
    assert (project / "notes.moved/team.md").read_bytes() == NEW


# ------------------------------------------------------------------------ concurrent edits


@pytest.mark.parametrize("how", ["in place", "by rename"])
def test_an_edit_saved_after_the_fix_was_staged_is_kept(project, monkeypatch, how):
    """An editor saves the notes after ``--fix`` staged its temporary file, before the
    rename: the edit stays, the fixes are left with a note."""
    notes = project / "notes/team.md"
    edited = OLD + b"+ a line the editor saved meanwhile\n"
    real = writers.stage

    def then_saved(dir_fd, name, data=b"", **kwargs):
        tmp = real(dir_fd, name, data, **kwargs)
        if name == "team.md":
            if how == "in place":
                notes.write_bytes(edited)
            else:
                (project / "notes/.team.md.swp").write_bytes(edited)
                os.replace(project / "notes/.team.md.swp", notes)
        return tmp

    monkeypatch.setattr(writers, "stage", then_saved)
    r = cli(*FIX)
    assert notes.read_bytes() == edited
    assert r.exit_code == 1
    assert note_lines(r.stderr) == [CHANGED]
    assert temp_files(project / "notes") == []


def test_a_file_locked_by_another_run_is_left_alone(project, monkeypatch):
    monkeypatch.setattr(rewrites, "LOCK_WAIT", 0.01)
    notes = project / "notes/team.md"
    with open(notes, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        r = cli(*FIX)
    assert notes.read_bytes() == OLD
    assert note_lines(r.stderr) == [
        "brainmigrate: note: notes/team.md: locked by another run; left alone, run --fix again"
    ]


def test_two_fix_runs_at_once_end_with_the_fixed_bytes_and_no_temporary(project):
    """Two ``--fix`` runs started together: both end, the notes hold the fixed bytes."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, "-m", "brainmigrate", *FIX]
    runs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)]
    runs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in runs:
        p.communicate(timeout=120)
    assert (project / "notes/team.md").read_bytes() == NEW
    assert temp_files(project / "notes") == []


# ------------------------------------------------------------------------ what the file keeps


def test_a_hard_link_is_kept_and_both_names_see_the_fix(project):
    notes = project / "notes/team.md"
    (project / "linked").mkdir()
    other = project / "linked/team.md"
    os.link(notes, other)
    inode = notes.stat().st_ino
    r = cli(*FIX)
    assert r.exit_code == 0, r.output
    assert notes.read_bytes() == NEW and other.read_bytes() == NEW
    assert notes.stat().st_ino == inode == other.stat().st_ino
    assert notes.stat().st_nlink == 2


def test_mode_and_owner_are_kept(project):
    notes = project / "notes/team.md"
    notes.chmod(0o604)
    owner = (notes.stat().st_uid, notes.stat().st_gid)
    if os.geteuid() == 0:
        os.chown(notes, 4321, 4322)
        owner = (4321, 4322)
    r = cli(*FIX)
    assert r.exit_code == 0, r.output
    assert notes.read_bytes() == NEW
    assert stat.S_IMODE(notes.stat().st_mode) == 0o604
    assert (notes.stat().st_uid, notes.stat().st_gid) == owner


def test_a_read_only_notes_file_is_refused_even_as_root(project):
    notes = project / "notes/team.md"
    notes.chmod(0o444)
    r = cli(*FIX)
    assert notes.read_bytes() == OLD
    assert r.exit_code == 1
    assert note_lines(r.stderr) == [
        "brainmigrate: note: notes/team.md: read-only; left alone (chmod u+w to fix it)"
    ]
    notes.chmod(0o644)


# ------------------------------------------------------------------------ nothing left behind


def test_a_leftover_of_a_killed_run_is_removed_by_the_next_fix(project):
    pid = dead_pid()
    left = project / f"notes/.team.md.bm{pid}.abcdefgh.tmp"
    left.write_bytes(OLD)
    alive = project / f"notes/.team.md.bm{os.getppid()}.abcdefgh.tmp"
    alive.write_bytes(OLD)  # a run still at work: kept
    r = cli(*FIX)
    assert r.exit_code == 0, r.output
    assert not left.exists() and alive.exists()


def test_a_leftover_beside_a_report_or_a_baseline_is_removed_by_the_next_run(project):
    pid = dead_pid()
    (project / "out").mkdir()
    planted = [project / f"out/.r.json.bm{pid}.abcdefgh.tmp"]
    planted.append(project / f".bl.json.bm{pid}.abcdefgh.tmp")
    for p in planted:
        p.write_text("{}")
    r = cli(
        "check", "notes", "--root", "repo", "--isolated", "--format", "json", "--output",
        "out/r.json", "--baseline", "bl.json", "--update-baseline",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert [p.exists() for p in planted] == [False, False]
    assert (project / "out/r.json").is_file() and (project / "bl.json").is_file()


KILLED = """
import os, sys
from brainmigrate import writers
real = writers.land
def die(dir_fd, tmp, name, shown_as):
    if shown_as is not None:  # a notes file, not a cache
        os.kill(os.getpid(), 9)
    real(dir_fd, tmp, name, shown_as)
writers.land = die
from brainmigrate.cli import main
sys.argv = ["brainmigrate", *sys.argv[1:]]
main()
"""


def test_a_fix_killed_with_its_temporary_written_leaves_it_to_the_next_run(project):
    """Killed right before the rename: the notes hold the old bytes, the temporary file is
    left (a kill cannot be caught), and the next run removes it and fixes the file."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.run([sys.executable, "-c", KILLED, *FIX], env=env, capture_output=True)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert (project / "notes/team.md").read_bytes() == OLD
    assert len(temp_files(project / "notes")) == 1
    r = cli(*FIX)
    assert r.exit_code == 0, r.output
    assert (project / "notes/team.md").read_bytes() == NEW
    assert temp_files(project / "notes") == []


#: A ``--fix`` run killed (SIGKILL) at the ``AT``-th notes file it puts in place: with
#: ``stage``, once its temporary file is written (before the rename); with ``land``, once
#: it is renamed into place.
KILLED_AT = """
import os, sys
from brainmigrate import writers
step, at = sys.argv[1], int(sys.argv[2])
real = getattr(writers, step)
seen = []
def counted(*args, **kwargs):
    out = real(*args, **kwargs)
    name = args[1] if step == "stage" else args[3]
    if name is not None and (step == "land" or name.endswith(".md")):
        seen.append(name)
        if len(seen) == at:
            os.kill(os.getpid(), 9)
    return out
setattr(writers, step, counted)
from brainmigrate.cli import main
sys.argv = ["brainmigrate", *sys.argv[3:]]
main()
"""


def test_a_fix_killed_at_each_point_leaves_old_or_new_bytes_and_the_next_run_cleans(project):
    """SIGKILL at 20 points of a ``--fix`` run over 21 notes files, alternately with a
    temporary file just written and just after a rename: every notes file holds its old
    bytes or its new bytes exactly (as many new as were renamed), and the next run leaves
    no temporary file in the folder and fixes the rest."""
    notes = project / "notes"
    for i in range(20):
        (notes / f"n{i:02}.md").write_bytes(OLD)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for at in range(1, 21):
        step = "stage" if at % 2 else "land"
        for p in notes.glob("*.md"):
            p.write_bytes(OLD)
        p = subprocess.run(
            [sys.executable, "-c", KILLED_AT, step, str(at), *FIX], env=env, capture_output=True
        )
        assert p.returncode == -signal.SIGKILL, (at, p.stderr)
        states = [f.read_bytes() for f in notes.glob("*.md")]
        renamed = at if step == "land" else at - 1
        assert (states.count(OLD), states.count(NEW)) == (21 - renamed, renamed), at
        assert len(temp_files(notes)) == (1 if step == "stage" else 0), at
        r = cli(*FIX)
        assert r.exit_code == 0, r.output
        assert temp_files(notes) == [], at
        assert {f.read_bytes() for f in notes.glob("*.md")} == {NEW}


# ------------------------------------------------------------------------ baselines


def test_a_baseline_from_the_configuration_that_leads_outside_is_refused(project):
    outside = project / "elsewhere"
    outside.mkdir()
    (outside / "theirs.json").write_text("precious\n")
    proj = project / "proj"
    proj.mkdir()
    shutil.move(project / "notes", proj / "notes")
    (proj / ".brainmigrate.toml").write_text('baseline = "bl.json"\nroots = ["../repo"]\n')
    (proj / "bl.json").symlink_to(outside / "theirs.json")
    os.chdir(proj)
    r = cli("check", "notes", "--update-baseline")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        f"brainmigrate: error: --baseline bl.json: leads to {outside / 'theirs.json'}, outside"
        f" {proj}, the folder of the configuration file that names it; nothing written"
        " (replace the symlink by the file, or pass --baseline on the command line)\n"
    )
    assert (outside / "theirs.json").read_text() == "precious\n"
    r = cli("check", "notes", "--update-baseline", "--fix")
    assert r.exit_code == 2
    assert (proj / "notes/team.md").read_bytes() == OLD  # refused before any work


EMPTY_BASELINE = '{"schema_version": 1, "entries": []}'


def test_a_baseline_from_the_configuration_inside_its_folder_is_written(project):
    (project / "kept").mkdir()
    (project / "kept/bl.json").write_text(EMPTY_BASELINE)
    (project / "bl.json").symlink_to("kept/bl.json")
    (project / ".brainmigrate.toml").write_text('baseline = "bl.json"\nroots = ["repo"]\n')
    r = cli("check", "notes", "--update-baseline")
    assert r.exit_code == 0, r.output
    assert (project / "bl.json").is_symlink()
    assert (project / "kept/bl.json").read_text() != EMPTY_BASELINE


def test_a_baseline_typed_on_the_command_line_is_written_through_its_symlink(project):
    outside = project / "elsewhere"
    outside.mkdir()
    (outside / "bl.json").write_text(EMPTY_BASELINE)
    (project / "bl.json").symlink_to(outside / "bl.json")
    r = cli(*FIX[:-2], "--isolated", "--baseline", "bl.json", "--update-baseline")
    assert r.exit_code == 0, r.output
    assert (project / "bl.json").is_symlink()
    assert (outside / "bl.json").read_text() != EMPTY_BASELINE


def test_a_leftover_beside_the_store_is_removed_by_the_next_import(project):
    pid = dead_pid()
    left = project / f".know.db.bm{pid}.abcdefgh.tmp"
    left.write_text("half")
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--isolated")
    assert r.exit_code in (0, 1), r.output
    assert not left.exists() and (project / "know.db").is_file()


def test_a_write_below_a_folder_refuses_a_target_leading_out(project):
    outside = project / "elsewhere"
    outside.mkdir()
    (outside / "x.json").write_text("precious")
    (project / "notes/x.json").symlink_to(outside / "x.json")
    with pytest.raises(writers.Outside):
        writers.write_file(project / "notes/x.json", b"{}", within=project / "notes")
    assert (outside / "x.json").read_text() == "precious"
    assert temp_files(project / "notes") == [] and temp_files(outside) == []


def test_past_the_folders_kept_open_a_folder_is_walked_from_the_top(project, monkeypatch):
    """More PATHS than descriptors kept: the folder is walked from ``/`` without following a
    symlink, so the file is written, and a folder swapped for a symlink is still refused."""
    monkeypatch.setattr(rewrites, "KEPT_OPEN", 0)
    outside = _swapped_after_plan(project, monkeypatch)
    r = cli("check", "notes/team.md", "notes/sub/a.md", "--root", "repo", "--fix", "--isolated")
    assert (project / "notes/team.md").read_bytes() == NEW
    assert (outside / "a.md").read_bytes() == OLD
    assert (project / "sub.moved/a.md").read_bytes() == OLD
    assert note_lines(r.stderr) == [
        "brainmigrate: note: notes/sub/a.md: its folder changed since it was read (a symlink"
        " or no folder there now); left alone, run --fix again"
    ]


def test_a_fifo_where_a_cache_file_goes_is_replaced_not_waited_on(tmp_path):
    """A cache write (not an ``--output`` the user named) over a FIFO renames the file into
    its place: writing into the FIFO in place waited for a reader forever."""
    fifo = tmp_path / "declarations.cache"
    os.mkfifo(fifo)

    def ring(signum, frame):
        raise TimeoutError("the write waited on the FIFO")

    before = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 10)  # a hang fails the test, not the suite
    try:
        writers.write_file(fifo, b"index")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    assert stat.S_ISREG(os.lstat(fifo).st_mode)
    assert fifo.read_bytes() == b"index"


def _interrupted_after(monkeypatch, name: str, wanted) -> None:
    """Make ``os.<name>`` send this process SIGINT once it made what ``wanted(args)``
    says (the signal is held there, so it lands as the held block ends)."""
    real = getattr(os, name)

    def then_interrupt(*args, **kwargs):
        done = real(*args, **kwargs)
        if wanted(args):
            os.kill(os.getpid(), signal.SIGINT)
        return done

    monkeypatch.setattr(os, name, then_interrupt)


def test_ctrl_c_while_the_temporary_file_is_made_leaves_none(tmp_path, monkeypatch):
    """An interrupt held while the temporary file was made landed before the clean-up
    began: the file and its descriptor stayed."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    before = set(os.listdir("/proc/self/fd"))
    _interrupted_after(monkeypatch, "open", lambda a: str(a[0]).endswith(".tmp"))
    with pytest.raises(KeyboardInterrupt):
        writers.stage(fd, "notes.md", b"data")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []
    assert set(os.listdir("/proc/self/fd")) <= before | {str(fd)}
    os.close(fd)


def test_ctrl_c_while_an_export_folder_is_made_leaves_none(tmp_path, monkeypatch):
    from brainmigrate.exports import files

    signal.signal(signal.SIGINT, signal.default_int_handler)
    _interrupted_after(monkeypatch, "mkdir", lambda a: True)
    with pytest.raises(KeyboardInterrupt):
        files.publish(tmp_path / "out", {"a.md": "x"})
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("linked", [True, False])
def test_a_fix_the_disk_has_no_room_for_leaves_the_old_bytes_and_says_so(tmp_path, linked):
    """A write cut short (here by a file size limit) left a hard-linked file half new,
    half gone, and both kinds of file got the note "its folder cannot be opened"."""
    import resource

    from brainmigrate import fix

    before = b"see src/old_name.py\n" * 100
    after = b"see src/a_much_longer_new_name.py\n" * 100
    notes = tmp_path / "team.md"
    notes.write_bytes(before)
    if linked:
        os.link(notes, tmp_path / "other-name.md")
    result = fix.FixResult(edits=[fix.FileEdit("team.md", str(notes), before, after)])
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2500, limit[1]))
    try:
        fix.apply(result, [tmp_path])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limit)
    note = "team.md: cannot write it (File too large); left alone, run --fix again"
    assert result.notes == [note]
    assert (result.written, notes.read_bytes()) == ([], before)
    assert sorted(os.listdir(tmp_path)) == ["other-name.md", "team.md"][not linked :]


def test_a_leftover_with_this_runs_process_id_is_removed_too(project):
    """In a container every run may get the same process id: a killed run's leftover
    named with this run's id was taken for a file of this run and kept for ever. What this
    process made is known by name; any other name with its id is a leftover."""
    left = project / f"notes/.team.md.bm{os.getpid()}.abcdefgh.tmp"
    left.write_bytes(OLD)
    r = cli(*FIX)
    assert r.exit_code == 0, r.output
    assert not left.exists()
    assert [p.name for p in (project / "notes").iterdir() if ".bm" in p.name] == []


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_output_to_the_name_of_stdout_writes_after_what_the_shell_sent_there(tmp_path, name):
    """``--output /dev/stdout >> log.txt`` replaced log.txt (the name leads on to the file
    the shell opened, which was renamed over): what it held before was lost. The report is
    written through the open descriptor, after what it holds."""
    (tmp_path / "n.md").write_text("+ see `src/gone.py`\n")
    log = tmp_path / "log.txt"
    log.write_text("KEEP\n")
    args = [sys.executable, "-m", "brainmigrate", "check", "n.md", "--isolated", "--root", "."]
    with open(log, "a") as out:
        done = subprocess.run([*args, "--output", name], cwd=tmp_path, stdout=out, timeout=60)
    plain = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (done.returncode, plain.returncode) == (0, 0)
    assert log.read_text() == "KEEP\n" + plain.stdout


def test_a_configured_baseline_outside_by_dot_dot_is_refused_with_the_right_fix(project):
    """No symlink on the way: the fix is to name a file in that folder, not to replace a
    symlink."""
    (project / ".brainmigrate.toml").write_text(
        'baseline = "../outside/x.json"\nroots = ["repo"]\n'
    )
    r = cli("check", "notes", "--update-baseline")
    assert (r.exit_code, r.stderr) == (
        2,
        "brainmigrate: error: --baseline ../outside/x.json: leads to"
        f" {project.parent / 'outside/x.json'}, outside {project}, the folder of the"
        " configuration file that names it; nothing written (name a file in that folder, or"
        " pass --baseline on the command line)\n",
    )
