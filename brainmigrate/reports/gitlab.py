"""The GitLab Code Quality report of ``check`` (docs/check.md, Formats)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from brainmigrate.check import CheckResult
from brainmigrate.digests import blake2b
from brainmigrate.shapes import to_json

#: GitLab Code Quality severity (info, minor, major, critical, blocker) of each level.
_GITLAB_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def gitlab(result: CheckResult) -> str:
    """GitLab Code Quality JSON (a ``codequality`` report): an issue per finding that is
    neither suppressed nor baselined, with ``description``, ``check_name``, ``severity``,
    ``location.path``, ``location.lines.begin`` and a ``fingerprint`` that holds no line
    number (the finding's, with its occurrence, so repeated findings stay distinct).
    ``gitlab_chunks``, joined."""
    return "".join(gitlab_chunks(result))


def gitlab_chunks(result: CheckResult) -> Iterator[str]:
    """``gitlab`` in chunks, each issue made and encoded as it is written."""
    seen: Counter[str] = Counter()
    first = True
    for f in result.findings:
        if f.suppressed or f.baselined:
            continue
        seen[f.fingerprint] += 1
        key = f"{f.fingerprint}:{seen[f.fingerprint]}".encode()
        issue = {
            "type": "issue",
            "description": f"{f.code} {f.full_message}",
            "check_name": f"{f.code} {f.rule.name}",
            "fingerprint": blake2b(key, digest_size=16).hexdigest(),
            "severity": _GITLAB_SEVERITY[f.severity],
            "location": {"path": f.file, "lines": {"begin": f.line or 1}},
        }
        yield ("[\n  " if first else ",\n  ") + to_json(issue, indent=2).replace("\n", "\n  ")
        first = False
    yield "[]\n" if first else "\n]\n"
