"""Generate a checkout with Markdown notes that cite its files: `bench_peers.py`'s input.

The tree is a monorepo of packages (Python, TypeScript, Go sources, JSON and YAML files,
each 12-40 lines) and a ``docs/`` folder of guides with headings. Its notes are a top-level
``CLAUDE.md`` and ``AGENTS.md``, a ``CLAUDE.md`` in every package and the guides
themselves: headings, prose and bullets that cite the tree's files as Markdown links
(relative to the notes file, some with a ``#heading`` fragment), in backticks and in prose
(root-relative, some with a line form), and name CamelCase classes. About one citation in
twenty is dead: a file that was deleted or renamed (in the git history, when there is one), a
misspelt file in a real folder, a folder that is gone, or a heading no guide has.

With ``--commits N`` the tree is also a git repository whose ``N`` commits (written with
``git fast-import``, so a few seconds for thousands) add, edit, rename and delete files; the
last commit holds exactly the tree, and the work tree is clean. Everything is made from
``--seed``: the same arguments make the same bytes.

    python bench/notes_tree.py OUT [--notes-lines 5000] [--tree-files 3400] [--commits 0]
        [--seed 1]

Prints what it wrote.
"""

from __future__ import annotations

import argparse
import posixpath
import random
import subprocess
from pathlib import Path

WORDS = (
    "cache retries webhook ledger charge refund queue worker timeout build image compose "
    "migration schema index token session login payment gateway handler event deploy "
    "release branch review flaky sandbox staging metrics alert budget latency backoff lock "
    "transaction rollback replica shard partition"
).split()
TOPICS = ["Setup", "Rollback steps", "Local development", "Release checklist", "Testing"]
EXTS = ["py", "py", "py", "ts", "ts", "go", "json", "yaml"]


def _camel(rng: random.Random) -> str:
    return "".join(w.title() for w in rng.sample(WORDS, 2)) + rng.choice(
        ["Service", "Client", "Repository", "Handler", "Worker", "Policy"]
    )


def _source(ext: str, name: str, rng: random.Random) -> str:
    body = [f"// {' '.join(rng.sample(WORDS, 5))}" for _ in range(rng.randint(8, 34))]
    if ext == "py":
        lines = [f"class {name}:", "    def run(self):", "        return 1"]
        lines += [f"# {b[3:]}" for b in body]
    elif ext == "ts":
        lines = [f"export class {name} {{", "  run(): number { return 1; }", "}", *body]
    elif ext == "go":
        lines = ["package main", "", f"type {name} struct{{}}", *body]
    elif ext == "json":
        lines = ["{", f'  "name": "{name}",'] + [f'  "k{i}": {i},' for i in range(len(body))]
        lines += ['  "end": true', "}"]
    else:
        lines = [f"name: {name}"] + [f"k{i}: {b[3:]}" for i, b in enumerate(body)]
    return "\n".join(lines) + "\n"


def make_tree(rng: random.Random, files: int) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """The tree's files (path -> text), the CamelCase class of each source file, and the
    packages' folders."""
    tree: dict[str, str] = {}
    classes: dict[str, str] = {}
    packages = [f"packages/{w}-{i}" for i, w in enumerate(rng.sample(WORDS, 24))]
    packages = packages[: max(3, min(24, files // 140))]
    guides = max(2, files // 200)
    for g in range(guides):
        heads = rng.sample(TOPICS, 3)
        text = [f"# Guide {g}", ""]
        for h in heads:
            text += [f"## {h}", "", " ".join(rng.sample(WORDS, 9)) + ".", ""]
        tree[f"docs/guide-{g}.md"] = "\n".join(text)
    while len(tree) < files - len(packages) - 2:
        pkg = rng.choice(packages)
        ext = rng.choice(EXTS)
        folder = f"{pkg}/src/{rng.choice(WORDS[:12])}"
        if ext in ("json", "yaml"):
            folder = f"{pkg}/config"
        name = _camel(rng)
        path = f"{folder}/{name[0].lower()}{name[1:]}.{ext}"
        if path not in tree:
            tree[path] = _source(ext, name, rng)
            classes[path] = name
    return tree, classes, packages


def _gone_names(rng: random.Random, tree: dict[str, str], count: int) -> list[str]:
    """Paths in the tree's folders that no file has (the files git history deleted)."""
    out: list[str] = []
    sources = sorted(p for p in tree if not p.startswith("docs/"))
    while len(out) < count:
        folder = posixpath.dirname(rng.choice(sources))
        ext = rng.choice(EXTS)
        path = f"{folder}/old{_camel(rng)}.{ext}"
        if path not in tree and path not in out:
            out.append(path)
    return out


class Citer:
    """Makes the citing lines of one notes file at ``home`` (its folder, '' at the top)."""

    def __init__(self, rng, tree, classes, deleted, renamed, home):
        self.rng, self.tree, self.classes, self.home = rng, tree, classes, home
        self.files = sorted(tree)
        self.deleted, self.renamed = deleted, renamed
        self.guides = sorted(p for p in tree if p.startswith("docs/"))

    def _pick(self) -> str:
        r = self.rng.random()
        if r < 0.02:
            return self.rng.choice(self.deleted)
        if r < 0.035:
            return self.rng.choice(sorted(self.renamed))
        if r < 0.05:  # misspelt
            p = self.rng.choice(self.files)
            return p.replace(".", "s.", 1) if "." in posixpath.basename(p) else p + "x"
        if r < 0.055:
            return posixpath.dirname(self.rng.choice(self.files)) + "-old/"
        return self.rng.choice(self.files)

    def link(self) -> str:
        rng = self.rng
        if rng.random() < 0.15:
            guide = rng.choice(self.guides)
            head = rng.choice(TOPICS) if rng.random() < 0.9 else "Troubleshooting"
            target = self._rel(guide) + "#" + head.lower().replace(" ", "-")
            return f"[{head.lower()}]({target})"
        path = self._pick()
        return f"[{posixpath.basename(path.rstrip('/'))}]({self._rel(path)})"

    def _rel(self, path: str) -> str:
        trail = "/" if path.endswith("/") else ""
        rel = posixpath.relpath(path.rstrip("/"), self.home or ".")
        return rel + trail

    def cited(self) -> str:
        path = self._pick()
        form = ""
        if path in self.tree and self.rng.random() < 0.3:
            form = f":{self.rng.randint(1, self.tree[path].count(chr(10)))}"
        return path + form

    def line(self) -> str:
        rng = self.rng
        words = rng.sample(WORDS, rng.randint(5, 10))
        r = rng.random()
        if r < 0.20:
            words.insert(rng.randrange(len(words)), self.link())
        elif r < 0.35:
            words.insert(rng.randrange(len(words)), f"`{self.cited()}`")
        elif r < 0.42:
            words.insert(rng.randrange(len(words)), self.cited())
        if rng.random() < 0.25:
            cls = self.classes[rng.choice(sorted(self.classes))]
            words.insert(rng.randrange(len(words)), cls)
        text = " ".join(words)
        return f"- {text}" if rng.random() < 0.7 else text[0].upper() + text[1:] + "."


def make_notes(rng, tree, classes, packages, deleted, renamed, lines) -> dict[str, str]:
    """The notes files (path -> text), ``lines`` lines in all; the guides get theirs added."""
    homes = ["", "", *packages]
    names = ["CLAUDE.md", "AGENTS.md"] + [f"{p}/CLAUDE.md" for p in packages]
    guides = sorted(p for p in tree if p.startswith("docs/"))
    names += guides
    homes += ["docs"] * len(guides)
    per_file = max(4, lines // len(names))
    notes: dict[str, str] = {}
    for name, home in zip(names, homes, strict=True):
        citer = Citer(rng, tree, classes, deleted, renamed, home)
        body = tree.get(name, f"# {name}\n").splitlines()
        body += ["", "## Notes", ""]
        while len(body) < per_file:
            r = rng.random()
            if r < 0.08:
                body += ["", f"## {rng.choice(WORDS).title()}", ""]
            else:
                body.append(citer.line())
        notes[name] = "\n".join(body) + "\n"
    return notes


def build(out: Path, notes_lines: int, tree_files: int, seed: int = 1) -> dict:
    """Write the tree under ``out``; return what the history needs: ``files`` (the final
    tree), ``deleted`` (paths history deletes) and ``renamed`` (old path -> new path), and
    ``notes`` (the notes files, relative)."""
    rng = random.Random(seed)
    tree, classes, packages = make_tree(rng, tree_files)
    gone = _gone_names(rng, tree, max(4, tree_files // 40))
    half = len(gone) // 2
    deleted = gone[:half]
    sources = sorted(p for p in tree if not p.startswith("docs/"))
    renamed = dict(zip(gone[half:], rng.sample(sources, len(gone) - half), strict=True))
    notes = make_notes(rng, tree, classes, packages, deleted, renamed, notes_lines)
    tree.update(notes)
    for path, text in sorted(tree.items()):
        f = out / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    return {"files": tree, "deleted": deleted, "renamed": renamed, "notes": sorted(notes)}


def history(
    files: dict[str, str], deleted, renamed, commits: int, seed: int = 1, executable=()
) -> bytes:
    """A ``git fast-import`` stream of ``commits`` commits on ``main`` whose last holds
    exactly ``files`` (those named in ``executable`` with mode 755). Along the way files are
    added (renamed ones under their old names), edited, renamed and deleted: the cited
    ``deleted`` and ``renamed`` paths, and as much churn no note cites (a file beside each
    file of the tree, added and later deleted; one file in seven renamed from an old name),
    as a project's history has."""
    global EXECUTABLE
    EXECUTABLE = frozenset(executable)
    rng = random.Random(seed)
    paths = sorted(files)
    churn = [f"{posixpath.dirname(p)}/legacy-{posixpath.basename(p)}" for p in paths if "/" in p]
    gone = list(deleted) + [c for c in churn if c not in files]
    moves = dict(renamed)
    back = {new: old for old, new in renamed.items()}
    for p in rng.sample(paths, len(paths) // 7):
        stem, dot, ext = p.rpartition(".")
        old = f"{stem}-v1{dot}{ext}" if dot else p + "-v1"
        if p not in back and old not in files and old not in moves:
            moves[old], back[p] = p, old
    adds = [back.get(p, p) for p in paths] + gone
    rng.shuffle(adds)
    state: dict[str, str] = {}
    out: list[bytes] = []
    add_until = max(1, commits * 6 // 10)
    per_commit = -(-len(adds) // add_until)
    later = {"moves": [], "gone": []}  # added, not yet renamed or deleted
    gone_set = set(gone)
    for k in range(1, commits + 1):
        ops: list[bytes] = []
        if k == commits:  # the last commit: exactly the tree
            for p in sorted(set(state) - set(files)):
                ops.append(b"D " + p.encode() + b"\n")
            for p in paths:
                if state.get(p) != files[p]:
                    ops.append(_modify(p, files[p]))
        elif adds and k <= add_until:
            for p in adds[:per_commit]:
                state[p] = files.get(moves.get(p, p), f"# {p}\n") + f"# v{k}\n"
                ops.append(_modify(p, state[p]))
                if p in moves:
                    later["moves"].append(p)
                elif p in gone_set:
                    later["gone"].append(p)
            del adds[:per_commit]
        else:
            for _ in range(rng.randint(1, 3)):
                ops += _change(rng, state, files, moves, later, k)
        out.append(_commit(k, ops))
    return b"".join(out)


def _change(rng, state, files, moves, later, k) -> list[bytes]:
    """One change of a later commit: an edit, a rename of an old name or a deletion."""
    r = rng.random()
    if r < 0.2 and later["moves"]:
        old = later["moves"].pop(rng.randrange(len(later["moves"])))
        new = moves[old]
        state[new] = state.pop(old)
        return [f"R {old} {new}\n".encode()]
    if r < 0.75 and later["gone"]:
        path = later["gone"].pop(rng.randrange(len(later["gone"])))
        del state[path]
        return [b"D " + path.encode() + b"\n"]
    path = rng.choice(list(state))
    state[path] = files.get(path, state[path]) + f"# edit {k}\n"
    return [_modify(path, state[path])]


EXECUTABLE: frozenset[str] = frozenset()


def _modify(path: str, text: str) -> bytes:
    data = text.encode()
    mode = b"100755" if path in EXECUTABLE else b"100644"
    return b"M " + mode + b" inline " + path.encode() + b"\ndata %d\n" % len(data) + data + b"\n"


def _commit(k: int, ops: list[bytes]) -> bytes:
    msg = f"change {k}\n".encode()
    head = (
        b"commit refs/heads/main\nmark :%d\n" % k
        + b"committer Bench <bench@example.com> %d +0000\n" % (1_700_000_000 + k * 600)
        + b"data %d\n" % len(msg)
        + msg
    )
    if k > 1:
        head += b"from :%d\n" % (k - 1)
    return head + b"".join(ops) + b"\n"


def git_repo(out: Path, built: dict, commits: int, seed: int = 1) -> None:
    """Make ``out`` (holding the tree ``build`` wrote) a git repository of ``commits``
    commits whose last is the tree, with a remote ``origin``; its work tree is clean."""
    git = ["git", "-C", str(out), "-c", "core.autocrlf=false"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    executable = built.get("executable", ())
    stream = history(built["files"], built["deleted"], built["renamed"], commits, seed, executable)
    subprocess.run([*git, "fast-import", "--quiet"], input=stream, check=True)
    subprocess.run([*git, "reset", "-q"], check=True)
    # as a clone has (remark-validate-links asks for it)
    origin = "https://github.com/example/notes-bench.git"
    subprocess.run([*git, "remote", "add", "origin", origin], check=True)
    dirty = subprocess.run([*git, "status", "--porcelain"], capture_output=True, check=True)
    if dirty.stdout.strip():
        raise SystemExit(f"{out}: the last commit is not the tree:\n{dirty.stdout[:500]!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--notes-lines", type=int, default=5000)
    ap.add_argument("--tree-files", type=int, default=3400)
    ap.add_argument("--commits", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    built = build(a.out, a.notes_lines, a.tree_files, a.seed)
    if a.commits:
        git_repo(a.out, built, a.commits, a.seed)
    lines = sum(built["files"][n].count("\n") for n in built["notes"])
    print(
        f"wrote {len(built['files'])} files under {a.out}: {len(built['notes'])} notes files, "
        f"{lines} notes lines, {a.commits} commits"
    )


if __name__ == "__main__":
    main()
