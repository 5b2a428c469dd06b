"""The checkouts' files as they are now, each read once per run: whether a root is
readable, which files and folders it holds (never one outside it), their bytes, content
hash and digests, the declarations of source files (through the declaration cache,
``CodeIndex.read_files``), each root's commit and git renames.

``fingerprints.Checkouts`` builds the anchor states and the fingerprints on it (SPEC.md
§Staleness); this module knows nothing of either.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from brainmigrate import inputs
from brainmigrate.codeindex.extract import digest, normalise_source
from brainmigrate.codeindex.tokens import folded_digest
from brainmigrate.digests import blake2b
from brainmigrate.model import Anchor
from brainmigrate.roots import remote_of, root_folder
from brainmigrate.trails import BranchTrail, History

#: The kind of an anchor checked for existence only (SPEC.md §Staleness "Folder anchor").
FOLDER = "folder"
#: Target kinds of a fingerprint that are no declaration.
FILE, LINES = "file", "lines"


class CheckoutFiles:
    """The checkouts' files as they are now, read once per run.

    ``roots``: when given, every anchor is looked up in these folders instead of the root
    recorded with it (a store moved to another machine): first in the folder its recorded
    root maps to (``mapped``), then in the others in order. ``base``: the store's folder,
    that a recorded root relative to it is read in (``roots.root_folder``); ``recorded``:
    the store's roots table (``(name, remote)`` in order); ``folders``: recorded root name
    -> its folder, where the run knows it (an import's own roots). ``cache_dir``: the
    declaration cache folder (None: the default). ``few``: up to this many changed files
    of a root are parsed without the cache (``search`` and ``show``, which read a handful
    of files: loading a large root's cache costs more than parsing them); 0: always
    through the cache.
    """

    def __init__(
        self,
        roots: Sequence[str | os.PathLike] = (),
        cache_dir: str | os.PathLike | None = None,
        few: int = 0,
        base: str | None = None,
        recorded: Sequence[tuple[str, str | None]] = (),
        folders: Mapping[str, str] | None = None,
    ) -> None:
        self.roots = [os.path.abspath(os.fspath(r)) for r in roots]
        self.base = base
        self.recorded = list(recorded)
        self._mapped: dict[str, str] | None = None
        self._folders: dict[str, str] = dict(folders or {})
        self.few = few
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self._readable: dict[str, bool] = {}
        self._real: dict[str, str] = {}
        self._indexes: dict[str, object] = {}
        self._is_file: dict[tuple[str, str], bool] = {}
        self._is_dir: dict[tuple[str, str], bool] = {}
        self._states: dict[tuple[str, str], object] = {}
        self._bytes: dict[tuple[str, str], bytes | None] = {}
        self._hashes: dict[tuple[str, str], str | None] = {}
        self._names: dict[tuple[str, str, bool], dict[str, list]] = {}
        self._commits: dict[str, str | None] = {}
        self._histories: dict[str, History] = {}
        self._digests: dict[tuple[str, str], dict[str, list[str]]] = {}
        self._lines: dict[tuple[str, str, bool], list[bytes] | None] = {}
        self._legacy: dict[tuple[str, str], object] = {}
        self._line_hashes: dict[tuple[str, str], frozenset[str] | None] = {}
        self._same_bytes: dict[tuple[str, str], dict[str, list[str]]] = {}
        self._held: dict[tuple[str, str, str], tuple[bytes, str] | None] = {}
        self._held_declarations: dict[tuple[str, str, str], set[tuple]] = {}
        self._held_lines: dict[tuple, list[bytes] | None] = {}
        self._held_parsed: dict[tuple, tuple[tuple, str | None]] = {}
        self._changed: dict[tuple[str, str], frozenset[str] | None] = {}
        self._sketches: dict[tuple[str, str], str | None] = {}
        self._errors: dict[tuple[str, str], str | None] = {}
        self._sizes: dict[tuple[str, str], int] = {}

    # --- roots and files

    def folder(self, name: str) -> str:
        """The folder recorded root ``name`` is read in without ``--root``."""
        found = self._folders.get(name)
        if found is None:
            found = self._folders[name] = root_folder(name, self.base)
        return found

    def mapped(self) -> dict[str, str]:
        """Recorded root name -> the ``--root`` folder it maps to: one recorded root maps
        to the first ``--root``; of several, each to the ``--root`` of the same git remote,
        else to the ``--root`` at its position (the second recorded root to the second
        ``--root``); a folder maps to one recorded root at most."""
        if self._mapped is None:
            self._mapped = {}
            if len(self.recorded) == 1 and self.roots:
                self._mapped[self.recorded[0][0]] = self.roots[0]
            elif self.recorded and self.roots:
                remotes = {r: remote_of(r) for r in self.roots if self.readable(r)}
                free = list(self.roots)
                for name, remote in self.recorded:
                    hit = next((r for r in free if remote and remotes.get(r) == remote), None)
                    if hit is not None:
                        self._mapped[name] = hit
                        free.remove(hit)
                for i, (name, _) in enumerate(self.recorded):
                    if name not in self._mapped and i < len(self.roots) and self.roots[i] in free:
                        self._mapped[name] = self.roots[i]
                        free.remove(self.roots[i])
        return self._mapped

    def order(self, anchor: Anchor) -> list[str]:
        """The folders an anchor is looked up in, in order: its recorded root's folder, or
        with ``--root`` the folder that root maps to, then the other ``--root`` folders."""
        if not self.roots:
            return [self.folder(anchor.root)]
        first = self.mapped().get(anchor.root)
        if first is None or first == self.roots[0]:
            return self.roots
        return [first, *(r for r in self.roots if r != first)]

    def roots_of(self, anchor: Anchor) -> list[str]:
        """The readable roots an anchor is looked up in, in order (``order``)."""
        return [r for r in self.order(anchor) if self.readable(r)]

    def readable(self, root: str) -> bool:
        """Whether folder ``root`` can be listed (asked once per root; its real path is
        kept for ``is_file`` and ``is_dir``)."""
        if root not in self._readable:
            try:
                with os.scandir(root) as entries:
                    next(entries, None)
                ok = True
            except OSError:
                ok = False
            self._readable[root] = ok
            self._real[root] = os.path.realpath(root)
        return self._readable[root]

    def is_file(self, root: str, rel: str) -> bool:
        """Whether ``root`` holds a regular file at ``rel`` (never one outside the root)."""
        return self._inside(self._is_file, os.path.isfile, root, rel)

    def is_dir(self, root: str, rel: str) -> bool:
        """Whether ``root`` holds a folder at ``rel`` (never one outside the root)."""
        return self._inside(self._is_dir, os.path.isdir, root, rel)

    def _inside(self, cache: dict, test, root: str, rel: str) -> bool:
        """``test`` (``os.path.isfile`` or ``isdir``) of ``rel`` in ``root``, true only when
        its real path lies under the root's; cached in ``cache``."""
        key = (root, rel)
        if key not in cache:
            full = os.path.join(root, rel)
            ok = False
            try:
                if test(full):
                    real = os.path.realpath(full)
                    base = self._real.get(root) or os.path.realpath(root)
                    ok = real.startswith(base.rstrip(os.sep) + os.sep)
            except (OSError, ValueError):
                ok = False
            cache[key] = ok
        return cache[key]

    def holds(self, root: str, anchor: Anchor) -> bool:
        """Whether ``root`` holds what ``anchor`` points at: a folder for a folder anchor,
        else a regular file."""
        if anchor.kind == FOLDER:
            return self.is_dir(root, anchor.path)
        return self.is_file(root, anchor.path)

    def index(self, root: str):
        """The ``CodeIndex`` of ``root`` (made on first need, over the declaration cache)."""
        if root not in self._indexes:
            from brainmigrate.codeindex import CodeIndex

            self._indexes[root] = CodeIndex(root, cache_dir=self.cache_dir)
        return self._indexes[root]

    def file_state(self, root: str, rel: str, legacy: bool = False):
        """``FileState`` of a source file (declarations and digest), or None. ``legacy``:
        with the digests fingerprints of ``digest_version`` 1 took (``extract_file(...,
        legacy=True)``), parsed apart from the declaration cache."""
        key = (root, rel)
        if key not in self._states:
            hashes = self.known_hashes(root, [rel], read=True)
            states = self.index(root).read_files([rel], cached=self.few == 0, hashes=hashes)
            self._states[key] = states[rel]
        if not legacy or self._states[key] is None:
            return self._states[key]
        if key not in self._legacy:
            self._legacy[key] = self._legacy_state(root, rel)
        return self._legacy[key]

    def _legacy_state(self, root: str, rel: str):
        """``rel``'s ``FileState`` with version-1 digests, or None when unreadable."""
        from brainmigrate.codeindex.extract import extract_file, rows_to_declarations
        from brainmigrate.codeindex.model import FileState

        data, language = self.data(root, rel), self.index(root).language_of(rel)
        if data is None or language is None:
            return None
        _error, rows, file_digest = extract_file(data, language, legacy=True)
        return FileState(tuple(rows_to_declarations(rows, rel, language)), file_digest)

    def content_hash(self, root: str, rel: str) -> str | None:
        """blake2b-16 of the file's bytes as they are, hashed one ``inputs.CHUNK`` at a
        time (None when unreadable: ``read_error`` says why)."""
        key = (root, rel)
        if key not in self._hashes:
            hasher = hashlib.blake2b(digest_size=16)
            try:
                inputs.hash_file(os.path.join(root, rel), hasher)
            except OSError as exc:
                self._hashes[key] = None
                self._errors[key] = str(exc.strerror or exc)
            else:
                self._hashes[key] = hasher.hexdigest()
                self._errors[key] = None
        return self._hashes[key]

    def known_hashes(self, root: str, rels, read: bool = False) -> dict[str, bytes]:
        """``{rel: cache.content_hash}`` of ``rels`` as this run hashed them (``read``: those
        not hashed yet too), for ``CodeIndex.read_files``: a cached entry of other bytes is
        never taken (an edit of the same size whose mtime was put back keeps its stat)."""
        got = {r: self.content_hash(root, r) if read else self._hashes.get((root, r)) for r in rels}
        return {rel: bytes.fromhex(h) for rel, h in got.items() if h}

    def read_error(self, root: str, rel: str, lines: bool = False) -> str | None:
        """Why the regular file ``rel`` of ``root`` cannot be read ("Permission denied",
        "is a FIFO": one swapped in since it was listed), or None when it can be opened
        (tried once per file: opened, not read). ``lines``: its lines are wanted, which
        are not read in a file over ``LINES_READ_MAX`` bytes ("is 3 GB; …")."""
        key = (root, rel)
        if lines and self._size(root, rel) > LINES_READ_MAX:
            size, most = inputs.size_text(self._size(root, rel)), inputs.size_text(LINES_READ_MAX)
            return f"is {size}; lines are read in files of at most {most}"
        if key not in self._errors:
            try:
                fd, _st = inputs.open_fd(os.path.join(root, rel))
            except OSError as exc:
                self._errors[key] = str(exc.strerror or exc)
            else:
                os.close(fd)
                self._errors[key] = None
        return self._errors[key]

    def large(self, root: str, rel: str) -> bool:
        """Whether ``rel`` is over ``STREAMED_OVER`` bytes: its digest and content hash are
        then taken streamed, and it takes no sketch (``line_hashes`` is None)."""
        return self._size(root, rel) > STREAMED_OVER

    def _size(self, root: str, rel: str) -> int:
        """The size of ``rel`` in bytes (0 when it cannot be stat-ed), asked once a file."""
        key = (root, rel)
        if key not in self._sizes:
            try:
                self._sizes[key] = os.stat(os.path.join(root, rel)).st_size
            except (OSError, ValueError):
                self._sizes[key] = 0
        return self._sizes[key]

    def unchanged(self, a: Anchor, root: str, rel: str) -> bool:
        """Whether ``rel`` holds the very bytes ``a`` was fingerprinted on: then every
        digest is what it was, and nothing needs parsing."""
        return bool(a.content_hash) and self.content_hash(root, rel) == a.content_hash

    def data(self, root: str, rel: str) -> bytes | None:
        """The file's bytes without a BOM and with CRLF as LF, or None when unreadable."""
        key = (root, rel)
        if key not in self._bytes and self._size(root, rel) > LINES_READ_MAX:
            return None  # never held whole (``read_error`` says so of cited lines)
        if key not in self._bytes:
            try:
                with inputs.opened(os.path.join(root, rel)) as fh:
                    self._bytes[key] = normalise_source(fh.read())
            except OSError:
                self._bytes[key] = None
        return self._bytes[key]

    # --- git

    def commit(self, root: str) -> str | None:
        """``git rev-parse HEAD`` of the checkout holding ``root`` (None outside git)."""
        if root not in self._commits:
            from brainmigrate.git import run_git

            out = run_git(root, "rev-parse", "--verify", "-q", "HEAD")
            self._commits[root] = out.decode().strip() if out else None
        return self._commits[root]

    def rename_trail(self, root: str, since: str | None) -> tuple[BranchTrail, bool]:
        """git's adds, deletes and renames from commit ``since`` (None, or no commit of
        ``HEAD``'s history: the whole history) to the working tree, uncommitted ``git mv``
        included, as a ``trails.BranchTrail`` (the branch's first-parent line decides); and
        whether they start at ``since`` (then a file's trail starts at its first removal,
        else at its last). Each root's history is read once (``trails.History``)."""
        if root not in self._histories:
            from brainmigrate.githistory import history_readers

            self._histories[root] = History(root, *history_readers(root, self.cache_dir))
        return self._histories[root].trail(since)

    def decl_digests(self, root: str, rel: str, legacy: bool = False):
        """The declarations of source file ``rel`` with their digests, or None for a file
        the index does not parse (``legacy``: version-1 digests, ``file_state``)."""
        state = self.file_state(root, rel, legacy)
        return state.declarations if state is not None else None

    def file_digest(self, root: str, rel: str, legacy: bool = False) -> str | None:
        """A file anchor's digest: a source file without the comments outside its
        declarations, any other file its whole content (SPEC.md §Staleness); ``legacy``:
        as a fingerprint of ``digest_version`` 1 took it."""
        state = self.file_state(root, rel, legacy)
        if state is not None:
            return state.digest
        if (root, rel) not in self._bytes and self.large(root, rel):
            try:
                with inputs.opened(os.path.join(root, rel)) as fh:
                    return folded_digest(inputs.chunks(fh))
            except OSError:
                return None
        data = self.data(root, rel)
        return None if data is None else digest(data)

    def line_texts(self, root: str, rel: str, legacy: bool = False) -> list[bytes] | None:
        """Each line of ``rel`` as a lines digest reads it (``codeindex.tokens.line_texts``),
        or None when it cannot be read; ``legacy``: as a lines digest of ``digest_version``
        1 read it (every file as one the index does not read: whitespace runs folded)."""
        key = (root, rel, legacy)
        if key not in self._lines:
            from brainmigrate.codeindex.tokens import line_texts

            data = self.data(root, rel)
            language = None if legacy else self.index(root).language_of(rel)
            self._lines[key] = None if data is None else line_texts(data, language)
        return self._lines[key]

    def trimmed(self, root: str, rel: str, lines: tuple[int, int]) -> tuple[int, int]:
        """``lines`` (``(first, last)``, 1-based) of ``rel`` without the blank lines at
        either end (a cited function and the blank line after it is that function); as
        they are when every one is blank or the file cannot be read."""
        texts = self.line_texts(root, rel, True)
        first, last = lines
        if texts is None:
            return lines
        while first < last and first <= len(texts) and not texts[first - 1]:
            first += 1
        while last > first and (last > len(texts) or not texts[last - 1]):
            last -= 1
        return (first, last) if first <= len(texts) and texts[first - 1] else lines

    def lines_digest(
        self, root: str, rel: str, lines: tuple[int, int], legacy: bool = False
    ) -> str | None:
        """The digest of lines ``(first, last)`` (1-based, inclusive) of ``rel``
        (``codeindex.tokens.lines_digest``), or None when it cannot be read (``legacy``:
        ``line_texts``)."""
        from brainmigrate.codeindex.tokens import lines_digest

        texts = self.line_texts(root, rel, legacy)
        return (
            None
            if texts is None
            else lines_digest(texts, *lines, self.raw_lines(root, rel, legacy))
        )

    def raw_lines(self, root: str, rel: str, legacy: bool = False) -> list[bytes] | None:
        """The raw lines (whitespace folded) a lines digest of code lines that hold no
        token reads (``codeindex.tokens.lines_digest``'s ``raw``): None for a file the index
        does not read (its lines are read raw already) and for ``legacy`` digests."""
        if legacy or self.index(root).language_of(rel) is None:
            return None
        return self.line_texts(root, rel, True)

    def same_digest(self, root: str, rel: str, wanted: str) -> list[str]:
        """Files of ``root`` with ``rel``'s extension whose file digest (of now: through
        the declaration cache) is ``wanted``."""
        ext = os.path.splitext(rel)[1]
        key = (root, ext)
        if key not in self._digests:
            paths = self._with_extension(root, ext)
            for rel_path, st in self.index(root).read_files(paths).items():
                self._states.setdefault((root, rel_path), st)
            by: dict[str, list[str]] = {}
            for p in paths:
                d = self.file_digest(root, p)
                if d is not None:
                    by.setdefault(d, []).append(p)
            self._digests[key] = by
        return self._digests[key].get(wanted, [])

    def same_bytes(self, root: str, rel: str, wanted: str) -> list[str]:
        """Files of ``root`` with ``rel``'s extension whose content hash is ``wanted``
        (byte for byte the file a fingerprint's ``content_hash`` was taken of)."""
        ext = os.path.splitext(rel)[1]
        key = (root, ext)
        if key not in self._same_bytes:
            by: dict[str, list[str]] = {}
            for p in self._with_extension(root, ext):
                h = self.content_hash(root, p)
                if h is not None:
                    by.setdefault(h, []).append(p)
            self._same_bytes[key] = by
        return self._same_bytes[key].get(wanted, [])

    def _with_extension(self, root: str, ext: str) -> list[str]:
        """The files of ``root``'s listing whose extension is ``ext``."""
        return [p for p in self.index(root).files() if os.path.splitext(p)[1] == ext]

    def line_hashes(self, root: str, rel: str) -> frozenset[str] | None:
        """The hashes of ``rel``'s lines a sketch is taken of (``sketch_lines``), or None
        when it cannot be read."""
        key = (root, rel)
        if key not in self._line_hashes:
            data = None if self.large(root, rel) else self.data(root, rel)
            self._line_hashes[key] = None if data is None else sketch_lines(data)
        return self._line_hashes[key]

    def sketch(self, root: str, rel: str) -> str | None:
        """The sketch of ``rel``'s lines a fingerprint keeps (``sketch_of``), or None when
        it cannot be read (taken once per file)."""
        key = (root, rel)
        if key not in self._sketches:
            hashes = self.line_hashes(root, rel)
            self._sketches[key] = None if hashes is None else sketch_of(hashes)
        return self._sketches[key]

    def changed_since(self, root: str, commit: str) -> frozenset[str] | None:
        """The files of ``root`` (relative to it) that are not as commit ``commit`` held
        them: tracked files changed since (``git diff --name-only``, the working tree) and
        untracked ones; None when git cannot tell. Asked once per (root, commit)."""
        key = (root, commit)
        if key not in self._changed:
            from brainmigrate.git import run_git

            diff = run_git(root, "diff", "--name-only", "-z", "--relative", commit, "--")
            others = run_git(root, "ls-files", "-z", "--others", "--exclude-standard")
            if diff is None or others is None:
                self._changed[key] = None
            else:
                names = (diff + b"\0" + others).split(b"\0")
                self._changed[key] = frozenset(os.fsdecode(n) for n in names if n)
        return self._changed[key]

    def held_at(self, root: str, commit: str, rel: str) -> bytes | None:
        """``rel``'s bytes as commit ``commit`` held them (``git cat-file --filters
        commit:./rel`` in ``root``: as a checkout writes them; BOM and CRLF as ``data``), or
        None when git cannot tell."""
        held = self._held_at(root, commit, rel)
        return None if held is None else held[0]

    def held_hash(self, root: str, commit: str, rel: str) -> str | None:
        """``content_hash`` of ``rel`` as commit ``commit`` held it, or None."""
        held = self._held_at(root, commit, rel)
        return None if held is None else held[1]

    def _held_at(self, root: str, commit: str, rel: str) -> tuple[bytes, str] | None:
        key = (root, commit, rel)
        if key not in self._held:
            from brainmigrate.git import run_git

            # as a checkout writes it (its eol and filters): its hash is then the one the
            # working file had when fingerprinted on that commit (a CRLF checkout too)
            out = run_git(root, "cat-file", "--filters", f"{commit}:./{rel}")
            self._held[key] = (
                None
                if out is None
                else (normalise_source(out), hashlib.blake2b(out, digest_size=16).hexdigest())
            )
        return self._held[key]


#: Files over this many bytes (16 MiB) are hashed streamed, never held whole, and take no
#: sketch, when nothing asks for their lines (a file anchor; the index parses no file this
#: large: ``codeindex.parse.DEFAULT_MAX_BYTES``).
STREAMED_OVER = 16 << 20
#: Files over this many bytes (64 MiB) are never read whole: lines cited in one are
#: unreachable (``read_error``), the rest of their fingerprint is streamed.
LINES_READ_MAX = 64 << 20


#: How many line hashes a sketch keeps (the lowest; SPEC.md §Staleness, "moved").
SKETCH_SIZE = 32
#: The hex characters of one line hash in a sketch (blake2b-4: among a file's thousands
#: of lines, a false match is one in a million).
SKETCH_HEX = 8
#: A line a sketch counts holds a letter or digit (``}`` or ``);`` say nothing of a file).
_WORDY = re.compile(rb"[0-9A-Za-z]")


def sketch_lines(data: bytes) -> frozenset[str]:
    """The hashes of ``data``'s distinct lines a sketch is taken of: each line with its
    whitespace runs folded to one space and stripped, empty ones and those without a
    letter or digit left out, hashed with blake2b-4 (``SKETCH_HEX`` hex characters)."""
    lines = {b" ".join(line.split()) for line in data.split(b"\n")}
    size = SKETCH_HEX // 2
    return frozenset(blake2b(ln, digest_size=size).hexdigest() for ln in lines if _WORDY.search(ln))


def sketch_of(hashes: Iterable[str]) -> str:
    """A bottom-k sketch of line ``hashes`` (``sketch_lines``): the ``SKETCH_SIZE`` lowest,
    ascending, joined without a separator (the shape ``stores.schema`` documents)."""
    return "".join(sorted(hashes)[:SKETCH_SIZE])


def sketch_hashes(sketch: str) -> list[str]:
    """The line hashes a ``sketch_of`` text holds."""
    return [sketch[i : i + SKETCH_HEX] for i in range(0, len(sketch), SKETCH_HEX)]


def shares_half(sketch: str, hashes: frozenset[str]) -> bool:
    """Whether a file of line ``hashes`` holds at least half of the lines ``sketch`` was
    taken of (its share of the sketch's hashes; an empty sketch tells nothing: False)."""
    held = sketch_hashes(sketch)
    return bool(held) and 2 * sum(h in hashes for h in held) >= len(held)


def enclosing(decls, lines: tuple[int, int]):
    """The declaration (of ``decls``) a fact citing ``lines`` (``(first, last)``, 1-based)
    is fingerprinted on (SPEC.md §Staleness): the innermost one whose span holds them,
    when it is the only one of that span there or encloses the others of it (``class
    Cfg: host = "a"; port = 80``: the class); None when two of the same span hold them
    side by side (``let a = 1, b = 2;``), whose lines' text is then the fingerprint
    (SPEC.md is silent on ties; docs/staleness.md "Lines inside a declaration")."""
    first, last = lines
    inside = [d for d in decls if d.lines[0] <= first and last <= d.lines[1]]
    if not inside:
        return None
    size = min(d.lines[1] - d.lines[0] for d in inside)
    ties = [d for d in inside if d.lines[1] - d.lines[0] == size]
    if len(ties) == 1:
        return ties[0]
    outer = [d for d in ties if all(d is e or _nested_in(e, d) for e in ties)]
    return outer[0] if len(outer) == 1 else None


def _nested_in(inner, outer) -> bool:
    """Whether declaration ``inner`` is declared inside ``outer`` (its container is
    ``outer``'s qualified name, or within it)."""
    container, name = inner.container, outer.qualname
    return bool(container) and (container == name or container.startswith(f"{name}."))
