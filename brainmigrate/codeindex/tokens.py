"""What a lines digest reads (SPEC.md §Staleness): each line of a file as the digest of its
lines sees it, so the text of cited lines can be digested and looked for again anywhere in
the file (a window of the same number of lines).

Interface used by ``checkouts`` and ``fingerprints``; the digest of code the index reads is
taken over its tokens (tree-sitter's leaves, comments left out).
"""

from __future__ import annotations

from brainmigrate.digests import blake2b


def line_texts(data: bytes, language: str | None) -> list[bytes]:
    """Each line of ``data`` (already BOM-stripped and LF-ended: ``extract.normalise_source``)
    as a lines digest reads it, one item per line (index 0 is line 1): its whitespace runs
    folded to one space and stripped. ``language``: the index's language name of the file,
    None for a file the index does not read."""
    return [b" ".join(line.split()) for line in data.split(b"\n")]


def lines_digest(texts: list[bytes], first: int, last: int) -> str:
    """Hex blake2b (12 bytes) of lines ``first`` to ``last`` (1-based, inclusive) of a file
    read by ``line_texts``: their non-empty texts joined by one space."""
    joined = b" ".join(t for t in texts[first - 1 : last] if t)
    return blake2b(joined, digest_size=12).hexdigest()
