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


def find_lines(texts: list[bytes], wanted: str, first: int, last: int) -> tuple[int, int] | None:
    """Where the text a lines digest ``wanted`` was taken of stands now in a file read by
    ``line_texts``: the window of ``last - first + 1`` lines whose ``lines_digest`` is
    ``wanted``, the one starting nearest line ``first`` (the earlier of two as near), as
    ``(first, last)`` 1-based; None when no window has it (SPEC.md §Staleness "File anchor
    with lines"). One join of the file's texts; each window is a slice of it, hashed."""
    n = last - first + 1
    if n < 1 or n > len(texts):
        return None
    kept = [t for t in texts if t]
    joined = b" ".join(kept)
    starts, ends, at = [], [], 0
    for t in kept:
        starts.append(at)
        at += len(t)
        ends.append(at)
        at += 1
    before = [0]  # before[i]: how many non-empty texts precede line i + 1
    for t in texts:
        before.append(before[-1] + (1 if t else 0))
    for s in sorted(range(len(texts) - n + 1), key=lambda s: (abs(s + 1 - first), s)):
        i, j = before[s], before[s + n] - 1
        window = joined[starts[i] : ends[j]] if i <= j else b""
        if blake2b(window, digest_size=12).hexdigest() == wanted:
            return s + 1, s + n
    return None
