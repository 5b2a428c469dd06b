"""Run git in a checkout: the one place brainmigrate starts a git process."""

from __future__ import annotations

import os
import subprocess


def run_git(
    folder: str | os.PathLike,
    *args: str,
    timeout: float = 600,
    errors: list[str] | None = None,
) -> bytes | None:
    """stdout of ``git -C folder -c core.quotepath=off ARGS``, or None when git is missing,
    fails, or runs past ``timeout`` seconds; then ``errors`` (when given) gets git's first
    line of stderr, or what kept git from running. Never raises for those."""
    try:
        out = subprocess.run(
            ["git", "-C", os.fspath(folder), "-c", "core.quotepath=off", *args],
            capture_output=True,
            check=False,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
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


def in_work_tree(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` or a folder above it holds a ``.git`` (a work tree git may still
    refuse to read: another owner, a broken repository)."""
    here = os.path.realpath(folder)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return True
        up = os.path.dirname(here)
        if up == here:
            return False
        here = up
