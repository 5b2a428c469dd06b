"""Run git in a checkout: the one place brainmigrate starts a git process."""

from __future__ import annotations

import os
import subprocess


def run_git(folder: str | os.PathLike, *args: str, timeout: float = 600) -> bytes | None:
    """stdout of ``git -C folder -c core.quotepath=off ARGS``, or None when git is missing,
    fails, or runs past ``timeout`` seconds. Never raises for those."""
    try:
        out = subprocess.run(
            ["git", "-C", os.fspath(folder), "-c", "core.quotepath=off", *args],
            capture_output=True,
            check=False,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None
