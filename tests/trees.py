"""Small trees tests build: files written at once, and git run without the user's
configuration (a fixed author, branch ``main``)."""

from __future__ import annotations

import subprocess

GIT = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
GIT += ["-c", "init.defaultBranch=main"]


def git(cwd, *args):
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True)


def write(base, files: dict[str, str]):
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def committed(repo, files: dict[str, str], message: str = "start"):
    """``files`` written in a new git checkout ``repo``, committed; returns ``repo``."""
    write(repo, files)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return repo


def renamed(repo, text: str, old: str = "src/old.py", new: str = "src/new.py"):
    """A new git checkout ``repo`` whose file ``old`` (holding ``text``) was committed, then
    renamed to ``new`` in a second commit (what ``check --fix`` rewrites); returns ``repo``."""
    committed(repo, {old: text})
    git(repo, "mv", old, new)
    git(repo, "commit", "-qm", "move")
    return repo
