"""Run git in a checkout: the one place brainmigrate starts a git process."""

from __future__ import annotations

import os
from collections.abc import Iterable

#: Settings that make git's output what brainmigrate parses, whatever the user's config:
#: paths unquoted, no colour, no signature lines in a log, a merge's changes listed
#: against each parent when -m asks for them (``log.diffMerges=first-parent`` would hide
#: what a merge dropped), and git's default rename limit (a history kept for ``HEAD``
#: would otherwise hold the renames of whatever ``diff.renameLimit`` was when it was read,
#: and one machine's hints differ from another's).
SETTINGS = (
    "core.quotepath=off",
    "color.ui=never",
    "log.showSignature=false",
    "log.diffMerges=separate",
    "diff.renameLimit=1000",
)
#: GIT_* variables kept for a git run: how git reaches a remote or its own programs, and
#: configuration given in the environment. Any other (GIT_DIR, GIT_WORK_TREE,
#: GIT_INDEX_FILE, ... as a hook inherits them) would point every ``git -C root`` at the
#: repository that ran the hook, whatever the root.
KEPT_GIT_VARIABLES = frozenset(
    {
        "GIT_EXEC_PATH",
        "GIT_CEILING_DIRECTORIES",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_SYSTEM",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_ASKPASS",
        "GIT_ALLOW_PROTOCOL",
        "GIT_HTTP_PROXY_AUTHMETHOD",
        "GIT_TRACE",
    }
)


def git_environment() -> dict[str, str]:
    """The environment a git run gets: this process's, without the GIT_* variables that
    name a repository, index or work tree (``KEPT_GIT_VARIABLES`` and
    ``GIT_CONFIG_KEY_*``/``GIT_CONFIG_VALUE_*`` stay). The same rule as pre-commit's.

    History is read as it was committed: replace refs (``git replace``) and a grafts file
    are not followed (``GIT_NO_REPLACE_OBJECTS``, ``GIT_GRAFT_FILE`` naming no file). They
    rewrite the history while ``HEAD`` stays, so a history kept for ``HEAD`` would no
    longer be what git answers."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GIT_")
        or k in KEPT_GIT_VARIABLES
        or k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    env["GIT_GRAFT_FILE"] = os.path.join(os.devnull, "no-grafts")
    return env


def run_git(
    folder: str | os.PathLike,
    *args: str,
    timeout: float = 600,
    errors: list[str] | None = None,
    stdin: bytes | None = None,
) -> bytes | None:
    """stdout of ``git -C folder -c SETTINGS... ARGS`` in ``git_environment()`` (reading
    ``stdin`` when given, else nothing), or None when git is missing, fails, or runs past
    ``timeout`` seconds; then ``errors`` (when given) gets git's first line of stderr, or
    what kept git from running. Never raises for those."""
    import subprocess  # (a run that starts no git does not load it)

    settings = [part for s in SETTINGS for part in ("-c", s)]
    try:
        out = subprocess.run(
            ["git", "-C", os.fspath(folder), *settings, *args],
            capture_output=True,
            check=False,
            timeout=timeout,
            **({"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}),
            env=git_environment(),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        if errors is not None:
            errors.append(f"git could not run: {exc}")
        return None
    if out.returncode != 0:
        if errors is not None:
            lines = os.fsdecode(out.stderr).strip().splitlines()
            errors.append(lines[0] if lines else f"git exited {out.returncode}")
        return None
    return out.stdout


def work_tree_top(folder: str | os.PathLike) -> str | None:
    """The nearest folder at or above ``folder`` (resolved) that holds a ``.git``, or None
    (a work tree git may still refuse to read: another owner, a broken repository)."""
    here = os.path.realpath(folder)
    while not os.path.lexists(os.path.join(here, ".git")):
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up
    return here


def head_state(top: str) -> tuple[str, bool] | None:
    """``(commit, shallow)``: the commit ``HEAD`` names in the work tree whose top folder
    (``work_tree_top``) is ``top``, and whether its clone is shallow -- what ``git
    rev-parse --is-shallow-repository HEAD`` says there. None without a commit (an unborn
    branch), or when git fails or refuses the repository.

    Read from the repository's files (``HEAD``, a loose ref or ``packed-refs``, the
    ``shallow`` file; through a ``.git`` file and ``commondir`` for a linked work tree or a
    submodule) when they hold the whole answer (``_head_from_files``); else git is asked."""
    known = _head_from_files(top)
    if known is not None:
        return (known[0], bool(known[1])) if known else None
    out = run_git(top, "rev-parse", "--is-shallow-repository", "HEAD")
    words = out.decode("ascii", "replace").split() if out else []
    return (words[1], words[0] == "true") if len(words) == 2 else None


def _read_small(path: str, limit: int = 4096) -> str | None:
    """The text of the regular file ``path`` (not a symlink, at most ``limit`` bytes, ASCII
    or UTF-8), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        data = os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > limit:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _is_oid(text: str) -> bool:
    """A SHA-1 object name as git prints it: 40 lowercase hex digits."""
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


def _head_from_files(top: str) -> tuple[str, str] | str | None:
    """``head_key`` read from the files of the repository at ``top``: ``(commit,
    shallow)``, ``""`` for an unborn branch, or None when only git can say. Only the plain
    case is read: a ``.git`` folder, or a ``.git`` file naming one; the work tree and
    repository owned by this user (else git's ``safe.directory`` rule decides); a
    repository git would take as one (``HEAD``, ``objects``, ``refs``); no
    ``extensions`` in its config (SHA-256, reftable, ...) and format version 0 or 1;
    ``HEAD`` detached at a commit or naming a branch under ``refs/heads/`` whose loose
    ref, if any, holds a commit."""
    if os.name != "posix" or (os.geteuid() == 0 and "SUDO_UID" in os.environ):
        return None  # whom git takes for the owner differs
    dotgit = os.path.join(top, ".git")
    try:
        if os.path.isdir(dotgit) and not os.path.islink(dotgit):
            gitfile, gitdir = None, dotgit
        else:
            text = _read_small(dotgit)
            if text is None or not text.startswith("gitdir: "):
                return None
            named = text[len("gitdir: ") :].rstrip("\r\n")
            if not named:
                return None
            gitfile, gitdir = dotgit, os.path.realpath(os.path.join(top, named))
        euid = os.geteuid()
        if any(os.lstat(p).st_uid != euid for p in (gitfile, top, gitdir) if p):
            return None
        common = _read_small(os.path.join(gitdir, "commondir"))
        if common is None:
            if os.path.lexists(os.path.join(gitdir, "commondir")):
                return None
            commondir = gitdir
        else:
            common = common.rstrip("\r\n")
            if not common:
                return None
            commondir = os.path.realpath(os.path.join(gitdir, common))
        for folder in ("objects", "refs"):
            where = os.path.join(commondir, folder)
            if not os.path.isdir(where) or not os.access(where, os.X_OK):
                return None
        config = _read_small(os.path.join(commondir, "config"), 1 << 20)
        if config is None:
            if os.path.lexists(os.path.join(commondir, "config")):
                return None
            config = ""
        config = config.lower()
        if "extensions" in config or _format_version(config) not in ("0", "1"):
            return None
        commit = _head_commit(gitdir, commondir)
        if commit is None:
            return None
        if not commit:
            return ""
        return commit, _shallow_tag(os.path.join(commondir, "shallow"))
    except OSError:
        return None


def _shallow_tag(path: str) -> str:
    """``""`` when the ``shallow`` file at ``path`` is missing (a whole clone), else
    ``shallow:`` and a digest of its content (the commits a fetch cut the history at: a
    later fetch changes it). Raises ``OSError`` when it cannot be read."""
    from brainmigrate.digests import blake2b

    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return ""
    try:
        data = b""
        while chunk := os.read(fd, 1 << 16):
            data += chunk
    finally:
        os.close(fd)
    return "shallow:" + blake2b(data, digest_size=16).hexdigest()


def head_key(top: str, *, files_only: bool = False) -> tuple[str, str] | str | None:
    """``(commit, shallow)``: the commit ``HEAD`` names in the work tree whose top folder
    is ``top`` and what cut its history (``""`` for a whole clone, else ``shallow:`` and
    a digest of the ``shallow`` file: a fetch that deepens the clone changes it while
    ``HEAD`` stays) -- what a history kept for that ``HEAD`` is keyed by. Read from the
    repository's files as ``head_state`` is, else asked of git. None as for
    ``head_state``. ``files_only``: git is not asked; ``""`` for an unborn branch, None
    when only git can say."""
    known = _head_from_files(top)
    if known is not None or files_only:
        return known if files_only else (known or None)
    out = run_git(top, "rev-parse", "--is-shallow-repository", "--git-path", "shallow", "HEAD")
    words = out.decode("utf-8", "surrogateescape").split("\n") if out else []
    if len(words) < 3 or words[0] not in ("true", "false"):
        return None
    shallow = ""
    if words[0] == "true":
        try:
            shallow = _shallow_tag(os.path.join(top, words[1])) or "shallow:"
        except OSError:
            shallow = "shallow:?"
    return words[2], shallow


def missing_object(errors: list[str]) -> bool:
    """Whether what git said (``run_git``'s ``errors``) is that an object of the store is
    missing or unreadable (``unable to read``, ``bad object``, ``missing blob``): what the
    same objects say again, unlike a timeout, a signal or a promisor remote out of reach."""
    said = " ".join(errors).lower()
    return any(word in said for word in ("unable to read", "bad object", "missing blob"))


def objects_stamp(top: str) -> str | None:
    """What the object store of the work tree at ``top`` holds, as far as its folders'
    times tell: the modification times of ``objects``, ``objects/pack`` and
    ``objects/info`` and the ``alternates`` named (a fetch that brings a pack, or objects
    that were missing, changes one). None when the repository's files do not say where
    its objects are."""
    dotgit = os.path.join(top, ".git")
    try:
        if os.path.isdir(dotgit) and not os.path.islink(dotgit):
            gitdir = dotgit
        else:
            text = _read_small(dotgit)
            if text is None or not text.startswith("gitdir: "):
                return None
            gitdir = os.path.realpath(os.path.join(top, text[len("gitdir: ") :].rstrip("\r\n")))
        common = _read_small(os.path.join(gitdir, "commondir"))
        if common is not None:
            gitdir = os.path.realpath(os.path.join(gitdir, common.rstrip("\r\n")))
        objects = os.path.join(gitdir, "objects")
        times = [os.stat(os.path.join(objects, f)).st_mtime_ns for f in ("", "pack")]
        info = os.path.join(objects, "info")
        times.append(os.stat(info).st_mtime_ns if os.path.isdir(info) else 0)
    except OSError:
        return None
    alternates = _read_small(os.path.join(objects, "info", "alternates"), 1 << 16) or ""
    return " ".join(map(str, times)) + "\n" + alternates


def _head_commit(gitdir: str, commondir: str) -> str | None:
    """The commit ``HEAD`` of ``gitdir`` stands at: detached at a commit, or naming a
    plain branch under ``refs/heads/`` (``_ref_commit`` of ``commondir``); ``""`` for an
    unborn branch, None when only git can say. Raises ``OSError`` as the files do."""
    head = _read_small(os.path.join(gitdir, "HEAD"))
    if head is None:
        return None
    head = head.rstrip("\n")
    if head.startswith("ref: "):
        ref = head[len("ref: ") :]
        parts = ref.split("/")
        if (
            len(parts) < 3
            or parts[:2] != ["refs", "heads"]
            or any(p in ("", ".", "..") or p.startswith(".") for p in parts)
            or any(c in ref for c in "\\ ~^:?*[\0\r\n\t")
            or ref.endswith((".lock", "."))
            or "@{" in ref
        ):
            return None
        return _ref_commit(commondir, ref)
    return head if _is_oid(head) else None


def _format_version(config: str) -> str:
    """``core.repositoryformatversion`` as the (lower-cased) config text sets it, "0" when
    it does not; "?" when the text is not plain enough to tell."""
    values = [
        line.partition("=")[2].strip()
        for line in config.splitlines()
        if line.strip().startswith("repositoryformatversion")
    ]
    if not values:
        return "0"
    return values[-1] if len(values) == 1 else "?"


def _ref_commit(commondir: str, ref: str) -> str | None:
    """The commit branch ``ref`` names: its loose ref, else its line in ``packed-refs``;
    ``""`` when neither has it (an unborn branch); None when only git can say."""
    loose = _read_small(os.path.join(commondir, *ref.split("/")))
    if loose is not None:
        loose = loose.rstrip("\n")
        return loose if _is_oid(loose) else None
    if os.path.lexists(os.path.join(commondir, *ref.split("/"))):
        return None  # a folder, a symlink, an unreadable file
    packed_path = os.path.join(commondir, "packed-refs")
    try:
        with open(packed_path, "rb") as fh:
            packed = fh.read()
    except FileNotFoundError:
        return ""
    want = b" " + os.fsencode(ref)
    for line in packed.split(b"\n"):
        if line.startswith((b"#", b"^")) or not line:
            continue
        if line.endswith(want) and len(line) == 40 + len(want):
            oid = line[:40].decode("ascii", "replace")
            return oid if _is_oid(oid) else None
    return ""


def in_work_tree(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` or a folder above it holds a ``.git`` (``work_tree_top``)."""
    return work_tree_top(folder) is not None


def git_renames(folder: str | os.PathLike) -> dict[str, str]:
    """Old path -> new path of every rename in the history of the git checkout holding
    ``folder``, paths relative to ``folder`` (a later rename of the same path wins), from
    ``history_events``. Empty when ``folder`` is not in a git checkout or git is missing
    or fails."""
    return {old: new for kind, old, new in history_events(folder) or () if kind == "R"}


def change_events(out: bytes) -> list[tuple[str, str, str]]:
    """``(status, path, new_path)`` of each add (``A``), delete (``D``) and rename (``R``)
    in ``--name-status -z`` output, in the order listed; ``new_path`` is ``""`` but for a
    rename. Other statuses are skipped."""
    return [(kind, os.fsdecode(a), os.fsdecode(b)) for _c, kind, a, b in _raw_events(out)]


def _raw_events(out: bytes) -> list[tuple[bytes, str, bytes, bytes]]:
    """``(commit, status, path, new_path)`` of ``change_events`` with the paths left as
    bytes (decoded only where kept); ``commit`` is the hex name of the commit a
    ``--format=%x01%H`` header before them names, ``b""`` without one."""
    fields = [p for p in (f.strip(b"\n") for f in out.split(b"\0")) if p]
    events: list[tuple[bytes, str, bytes, bytes]] = []
    commit = b""
    i = 0
    while i < len(fields):
        if fields[i].startswith(b"\x01"):
            commit = fields[i][1:]
            i += 1
            continue
        status = fields[i].decode("ascii", "replace")
        kind = status[:1]
        two = kind in ("R", "C") and status[1:].isdigit()
        if two and i + 2 < len(fields):
            if kind == "R":
                events.append((commit, "R", fields[i + 1], fields[i + 2]))
            i += 3
        elif len(status) <= 4 and kind.isalpha() and i + 1 < len(fields):
            if kind in ("A", "D"):
                events.append((commit, kind, fields[i + 1], b""))
            i += 2
        else:
            i += 1
    return events


#: What makes ``git log`` list a merge's changes against its first parent: git 2.31 and
#: later take ``--diff-merges=first-parent``; older git refuses it ("unrecognized
#: argument") and reads ``-m`` with ``--first-parent`` as that diff.
DIFF_MERGES = "--diff-merges=first-parent"


def log_events(
    folder: str | os.PathLike, *, first_parent: bool = False, since: str | None = None
) -> list[tuple[str, str, str, str]] | None:
    """``(commit, status, path, new_path)`` of the checked-out branch's history (from
    commit ``since`` when given: ``since..HEAD``), oldest first (a commit after its
    parents), paths relative to ``folder``: ``git log -M --reverse --date-order
    --diff-merges=first-parent --diff-filter=ADR --relative``; ``first_parent``: only
    the commits along ``HEAD``'s first parents (``--first-parent``: the branch's own line,
    each merge's changes against the branch as it was: the net renames it brought in).

    A merge is listed with its changes against its first parent, so a rename only the
    merge shows (a branch deleted the file in one commit and added it at its new path in
    another, or the merge's resolution moved it) is read too (SPEC.md §Staleness,
    "renames made by merge commits included"). Git older than 2.31 refuses
    ``DIFF_MERGES``: then ``first_parent`` reads ``-m --first-parent``, and the whole
    history is read without the merges' changes (their branches' commits carry most).
    Only the events of paths some rename names are kept (``log_events_of``). None when
    git fails (``since`` unknown to it included)."""
    out = log_output(folder, first_parent=first_parent, since=since)
    return None if out is None else log_events_of(out)


def log_output(
    folder: str | os.PathLike,
    *,
    first_parent: bool = False,
    since: str | None = None,
    until: str = "HEAD",
    modern: list[bool] | None = None,
    errors: list[str] | None = None,
) -> bytes | None:
    """What ``git log`` prints for ``log_events`` (of ``since..until`` when ``since`` is
    given, else of ``until``'s whole history), or None when git fails (``errors``, when
    given, gets what git said); ``modern`` (when given) gets whether git took
    ``DIFF_MERGES`` (each merge listed against its first parent) or was older."""
    args = ["log", "-M", "--reverse", "--date-order", "--diff-filter=ADR", "--name-status"]
    args += ["-z", "--format=%x01%H", "--relative"]
    args += ["--first-parent"] if first_parent else []
    args += [f"{since}..{until}"] if since else [] if until == "HEAD" else [until]
    said: list[str] = []
    out = run_git(folder, *args, DIFF_MERGES, timeout=120, errors=said)
    older = out is None and any(DIFF_MERGES.partition("=")[0] in e for e in said)
    if older:
        said = []
        out = run_git(folder, *args, *(["-m"] if first_parent else []), timeout=120, errors=said)
    if errors is not None:
        errors.extend(said)
    if modern is not None:
        modern.append(not older)
    return out


def log_events_of(out: bytes) -> list[tuple[str, str, str, str]]:
    """The events of ``log_output``'s ``out`` (outputs of consecutive ranges joined by a
    NUL read as one): only those of paths some rename names are kept (a rename's old and
    new path), and only those are decoded: what following a rename needs, without every
    file ever added."""
    events = _raw_events(out)
    named = {p for _c, kind, old, new in events if kind == "R" for p in (old, new)}
    return [
        (commit.decode("ascii", "replace"), kind, os.fsdecode(old), os.fsdecode(new))
        for commit, kind, old, new in events
        if old in named or new in named
    ]


def history_events(
    folder: str | os.PathLike, since: str | None = None, *, first_parent: bool = False
) -> list[tuple[str, str, str]] | None:
    """``log_events`` without their commits: ``(status, path, new_path)``."""
    events = log_events(folder, first_parent=first_parent, since=since)
    return None if events is None else [(kind, a, b) for _c, kind, a, b in events]


def last_held(folder: str | os.PathLike, rel: str) -> str | None:
    """The revision that last held the path ``rel`` (relative to ``folder``): ``HEAD`` when
    it holds it, else the parent of the last commit that touched it (``<commit>^``: the
    one that removed it); None outside git or when git never held it."""
    if run_git(folder, "rev-parse", "--verify", "-q", f"HEAD:./{rel}") is not None:
        return "HEAD"
    last = run_git(folder, "rev-list", "-n", "1", "HEAD", "--", f"./{rel}")
    if not last or not last.strip():
        return None
    return last.strip().decode("ascii", "replace") + "^"


def commit_parents(folder: str | os.PathLike) -> dict[str, tuple[str, ...]]:
    """Commit -> its parents, for every commit of ``HEAD``'s history, in topological order
    from ``HEAD`` (a commit before its parents: ``git rev-list --topo-order --parents
    HEAD``); empty when git fails."""
    out = run_git(folder, "rev-list", "--topo-order", "--parents", "HEAD", timeout=120)
    parents: dict[str, tuple[str, ...]] = {}
    for line in (out or b"").decode("ascii", "replace").splitlines():
        commit, *rest = line.split()
        parents[commit] = tuple(rest)
    return parents


def held_by(parents: dict[str, tuple[str, ...]], marked: Iterable[str]) -> dict[str, int]:
    """Commit -> the set, as bits of an int, of the ``marked`` commits it holds (itself
    or among its ancestors; bit ``i`` for the ``i``-th of ``marked``), for every commit
    of ``parents`` (``commit_parents``' order): one pass from the oldest, however many
    commits are asked about later."""
    bit = {c: 1 << i for i, c in enumerate(dict.fromkeys(marked))}
    held: dict[str, int] = {}
    for commit in reversed(list(parents)):  # each parent before its children
        mask = bit.get(commit, 0)
        for parent in parents[commit]:
            mask |= held.get(parent, 0)
        held[commit] = mask
    return held


def missing_at(folder: str | os.PathLike, wanted: Iterable[tuple[str, str]]) -> set:
    """The ``(commit, path)`` pairs of ``wanted`` whose commit holds nothing at ``path``
    (relative to ``folder``), in one ``git cat-file --batch-check``; a path with a line
    break is taken as held. Empty when git fails."""
    asked = [(c, p) for c, p in wanted if "\n" not in p and "\n" not in c]
    if not asked:
        return set()
    names = "".join(f"{c}:./{p}\n" for c, p in asked).encode("utf-8", "surrogateescape")
    out = run_git(folder, "cat-file", "--batch-check", stdin=names)
    if out is None:
        return set()
    answers = out.split(b"\n")
    return {
        pair for pair, answer in zip(asked, answers, strict=False) if answer.endswith(b" missing")
    }


def worktree_events(folder: str | os.PathLike) -> list[tuple[str, str, str]]:
    """``change_events`` not yet committed (``git diff -M HEAD``: staged or not, tracked
    files), paths relative to ``folder``. Empty when git fails."""
    out = run_git(folder, "diff", "-M", "--name-status", "-z", "--relative", "HEAD")
    return change_events(out or b"")
