"""The on-disk cache of one root's declarations.

One file per root, ``<cache_dir>/codeindex-<16 hex of blake2b(resolved root)>.bin``::

    b"BMCI1\\n" | namespace (32 ASCII hex) | blake2b-16 of the payload | payload

The payload is a pickle of ``{"root": str, "files": {path: Entry}}`` made only of dicts,
tuples, strings, bytes, ints, bools and None; it is read with an unpickler that refuses
every global, and only after its checksum matched. A file with another magic, namespace
(extractor / tree-sitter / language-pack versions, query texts, size limit), root, or a
bad checksum is discarded, never trusted. Writes go to a temporary file in the same folder,
then ``os.replace``.

``Entry`` is a tuple ``(size, mtime_ns, racy, content_hash, language, has_error, rows,
skip_reason, file_digest)``: ``rows`` is ``None`` for a skipped file (``skip_reason`` says
why); ``file_digest`` is the file's staleness digest (``tokens.Tokens.file_digest``), None when
skipped or when parsed without digests (``build`` and name lookups take none: then the
rows' digests are None too, and ``CodeIndex.read_files`` parses the file again). ``racy``
marks a file whose mtime was less than :data:`RACY_NS` old when it was read: its mtime may
not change on a quick re-edit, so it is trusted only after its content hash is checked.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from brainmigrate import inputs
from brainmigrate.digests import blake2b
from brainmigrate.fsutil import user_cache_dir
from brainmigrate.writers import write_file

MAGIC = b"BMCI1\n"
RACY_NS = 2_000_000_000

Entry = tuple[int, int, bool, bytes, str, bool, Any, str | None, str | None]


def default_cache_dir() -> Path:
    """The default cache folder.

    ``$BRAINMIGRATE_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/brainmigrate``, else
    ``~/.cache/brainmigrate``.
    """
    return user_cache_dir()


def cache_file(cache_dir: Path, root: Path) -> Path:
    """The cache file of a (resolved) root inside ``cache_dir``."""
    key = blake2b(os.fsencode(root), digest_size=8).hexdigest()
    return cache_dir / f"codeindex-{key}.bin"


def content_hash(data: bytes) -> bytes:
    """blake2b-16 of a file's raw bytes (checks racy entries)."""
    return blake2b(data, digest_size=16).digest()


def _no_globals(payload) -> Any:
    """``payload`` unpickled by an unpickler that refuses every global (``pickle`` is
    loaded when a cache is read: a run that reads none does not load it)."""
    import pickle

    class NoGlobals(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            raise pickle.UnpicklingError(f"global {module}.{name} refused")

    return NoGlobals(io.BytesIO(payload)).load()


def load(path: Path, namespace: str, root: Path) -> tuple[dict[str, Entry] | None, str]:
    """Read a cache file; returns ``(files, status)``.

    ``files`` is ``None`` when there is nothing usable; ``status`` is ``"used"``,
    ``"created"`` (no file yet) or ``"discarded: <why>"``. Never raises for bad content.
    """
    try:
        blob = inputs.read_whole(path)  # a FIFO or device there is refused, never waited on
    except FileNotFoundError:
        return None, "created"
    except OSError as exc:
        return None, f"discarded: unreadable ({exc.strerror or exc})"
    head = len(MAGIC) + 32 + 16
    if len(blob) < head or not blob.startswith(MAGIC):
        return None, "discarded: not a cache file or truncated"
    if blob[len(MAGIC) : len(MAGIC) + 32] != namespace.encode("ascii"):
        return None, "discarded: other version"
    payload = memoryview(blob)[head:]
    if blake2b(payload, digest_size=16).digest() != blob[head - 16 : head]:
        return None, "discarded: checksum mismatch (corrupt or truncated)"
    try:
        data = _no_globals(payload)
    except Exception:  # noqa: BLE001 - any unpickling failure means a bad file
        return None, "discarded: unreadable payload"
    if (
        not isinstance(data, dict)
        or data.get("root") != str(root)
        or not isinstance(data.get("files"), dict)
    ):
        return None, "discarded: unexpected content"
    return data["files"], "used"


def dumps(value: Any) -> bytes:
    """Pickle of ``value``, made of plain values without cycles (entries, rows), written
    without a memo: 6x faster than ``pickle.dumps`` for 155,000 rows, and smaller."""
    import pickle

    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True  # no memo: the value holds no cycles (they would recurse forever)
    pickler.dump(value)
    return out.getvalue()


def save(path: Path, namespace: str, root: Path, files: dict[str, Entry]) -> None:
    """Write the cache atomically (temporary file, then ``os.replace``).

    Raises:
        OSError: the folder cannot be created or written.
    """
    payload = dumps({"root": str(root), "files": files})
    check = blake2b(payload, digest_size=16).digest()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, MAGIC + namespace.encode("ascii") + check + payload)
