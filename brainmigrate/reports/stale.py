"""Reports of ``brainmigrate stale`` (docs/staleness.md, Formats).

``text``, ``json`` and ``junit`` (a testcase per fact looked at) are its own;
``github``, ``sarif``, ``markdown`` and ``gitlab`` are ``check``'s
reporters (``reports.ci``) over one ``BM501`` finding per stale fact, placed at the notes
line that fed the fact most recently (its origin), so a pull request that changes code shows which
note to read again.
"""

from __future__ import annotations

from enum import StrEnum

from brainmigrate.check import CheckedFact, CheckResult
from brainmigrate.rules import Finding, finding_key
from brainmigrate.shapes import one_line, shorten, to_json
from brainmigrate.stale import STALE_SCHEMA, FactCheck, StaleResult, diff_command


class Format(StrEnum):
    """Report formats of ``stale``."""

    TEXT = "text"
    JSON = "json"
    GITHUB = "github"
    SARIF = "sarif"
    MARKDOWN = "markdown"
    JUNIT = "junit"
    GITLAB = "gitlab"


def render(result: StaleResult, fmt: str, quiet: bool = False, store: str | None = None) -> str:
    """The report of ``result`` in format ``fmt``; ``quiet`` (``-q``) leaves the counts out
    of the text report; ``store`` (the path given) is a property of the JUnit report.
    Raises ``ValueError`` for an unknown format."""
    if quiet and Format(fmt) is Format.TEXT:
        return text(result, quiet=True)
    if Format(fmt) is Format.JUNIT:
        return junit(result, store)
    return FORMATTERS[Format(fmt)](result)


def summary(result: StaleResult) -> str:
    """``checked 120, stale 3, unreachable 1`` (and ``(dry run: nothing recorded)``)."""
    out = f"checked {result.checked}, stale {result.stale}, unreachable {result.unreachable}"
    return out + (" (dry run: nothing recorded)" if result.dry_run else "")


def _line(fc: FactCheck) -> str:
    from brainmigrate.search import hit_line

    return hit_line(fc.fact, stale_reason=fc.reason if fc.stale else "")


def text(result: StaleResult, quiet: bool = False) -> str:
    """Each stale fact as its search line after the notes line that fed it
    (``notes/x.md:12: k17 pattern area:x STALE: body changed: …  text``), under it the
    command that shows each stale anchor's change (``    git -C /abs diff 1f65… --
    src/Foo.kt``: ``stale.diff_command``; one line per distinct command), each unreachable
    one with its reason, then the counts (not when ``quiet``)."""
    out = []
    for fc in result.facts:
        where = f"{fc.origin[0]}:{fc.origin[1]}: " if fc.origin else ""
        if fc.stale:
            out.append(one_line(where) + _line(fc))
            diffs = (diff_command(c) for c in fc.anchors)
            out.extend(one_line(f"    {d}") for d in dict.fromkeys(diffs) if d)
        elif fc.state == "unreachable":
            reason = fc.anchors[0].reason if fc.anchors else "unreachable"
            out.append(one_line(f"{where}{fc.fact.key} unreachable: {reason}"))
    if not quiet:
        out.append(("STALE: " if result.stale else "OK: ") + summary(result))
    return "".join(f"{line}\n" for line in out)


def anchor_dict(c) -> dict:
    """An anchor of ``stale --format json`` (SPEC.md §Staleness), with ``diff``: the
    command that shows what changed (``stale.diff_command``; null when fresh, unreachable
    or without a commit)."""
    a = c.anchor
    return {
        "kind": a.kind,
        "path": a.path,
        "symbol": a.symbol,
        "root": a.root,
        "fingerprinted": a.fingerprinted,
        "verified_at": a.verified_at,
        "commit": a.commit,
        "state": c.state,
        "moved_to": c.moved_to,
        "diff": diff_command(c),
    }


def as_dict(result: StaleResult) -> dict:
    """The JSON report: counts, and every checked fact with its anchors' states."""
    return {
        "schema_version": STALE_SCHEMA,
        "checked": result.checked,
        "stale": result.stale,
        "unreachable": result.unreachable,
        "facts": [
            {
                "id": fc.fact.key,
                "state": fc.state,
                "reason": f"STALE: {fc.reason}" if fc.stale else None,
                "origin": {"file": fc.origin[0], "line": fc.origin[1]} if fc.origin else None,
                "anchors": [anchor_dict(c) for c in fc.anchors],
            }
            for fc in result.facts
        ],
    }


def as_json(result: StaleResult) -> str:
    """``stale --format json``: ``as_dict`` indented, ending in a newline."""
    return to_json(as_dict(result), indent=2) + "\n"


def findings(result: StaleResult) -> CheckResult:
    """The stale facts as ``check`` findings (code ``BM501``) at their notes lines."""
    found = []
    facts = []
    files: dict[str, None] = {}
    for fc in result.facts:
        if not fc.stale:
            continue
        file, line = fc.origin if fc.origin else ("(store)", None)
        files[file] = None
        facts.append(CheckedFact(file, line or 0, fc.fact.scope, fc.fact.text))
        subject = fc.worst.path if fc.worst and fc.worst.path else fc.anchors[0].anchor.path
        found.append(
            Finding(
                code="BM501",
                severity="error",
                file=file,
                line=line,
                col=None,
                message=_message(fc),
                subject=subject,
                scope=fc.fact.scope,
                fact_line=line,
                fact_text=shorten(fc.fact.text, 100, strip=True),
                fingerprint=finding_key("BM501", fc.fact.scope, fc.fact.text, subject),
            )
        )
    found.sort(key=lambda f: (f.file, f.line or 0))
    return CheckResult(
        tuple(files),
        facts,
        tuple(found),
        "error",
        tool="stale",
        summary_text=summary(result),
    )


def junit(result: StaleResult, store: str | None = None) -> str:
    """``stale --format junit``: a testsuite per notes file that fed the facts (``(store)``
    for a fact of none), a testcase per fact looked at (``k12: text``, at its notes line):
    a ``failure`` (type ``BM501``, the message of ``findings``) for a stale one, ``skipped``
    with the reason for an unreachable one, nothing for a fresh one, so a run where all is
    well still counts its tests. Each suite's properties are the run's: ``store``,
    ``dry-run`` and the counts ``checked``, ``stale``, ``unreachable`` (``summary``). Needs
    every fact looked at in ``result.facts`` (``stale.stale(every=True)``)."""
    import xml.etree.ElementTree as ET  # JUnit only

    from brainmigrate.reports.junit import xml_text as x

    top = ET.Element("testsuites", name="brainmigrate stale")
    by_file: dict[str, list[FactCheck]] = {}
    for fc in result.facts:
        by_file.setdefault(fc.origin[0] if fc.origin else "(store)", []).append(fc)
    run = [("store", store), ("dry-run", str(result.dry_run).lower())]
    run += [(n, str(getattr(result, n))) for n in ("checked", "stale", "unreachable")]
    for path, checks in by_file.items():
        suite = ET.SubElement(top, "testsuite", name=x(path))
        props = ET.SubElement(suite, "properties")
        for name, value in run:
            if value is not None:
                ET.SubElement(props, "property", name=name, value=x(value))
        for fc in checks:
            name = f"{fc.fact.key}: {shorten(fc.fact.text, 80, mark='')}"
            case = ET.SubElement(suite, "testcase", classname=x(path), name=x(name))
            case.set("file", x(path))
            if fc.origin:
                case.set("line", str(fc.origin[1]))
            if fc.stale:
                message = f"BM501 {_message(fc)}"
                fail = ET.SubElement(case, "failure", message=x(message), type="BM501")
                fail.text = x(_line(fc))
            elif fc.state == "unreachable":
                reason = fc.anchors[0].reason if fc.anchors else "unreachable"
                ET.SubElement(case, "skipped", message=x(f"unreachable: {reason}"))
        stale_here = sum(fc.stale for fc in checks)
        unreachable_here = sum(fc.state == "unreachable" for fc in checks)
        for key, value in (("tests", len(checks)), ("failures", stale_here)):
            suite.set(key, str(value))
        suite.set("errors", "0")
        suite.set("skipped", str(unreachable_here))
    top.set("tests", str(len(result.facts)))
    top.set("failures", str(result.stale))
    top.set("errors", "0")
    ET.indent(top)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(top, "unicode") + "\n"


def _ci(name: str):
    from brainmigrate.reports import ci

    def render_ci(result: StaleResult) -> str:
        return ci.render(findings(result), name)

    render_ci.__doc__ = f"``check``'s {name} reporter over the stale facts (``findings``)."
    return render_ci


#: Every format's formatter; a test asserts it covers ``Format``.
FORMATTERS = {
    Format.TEXT: text,
    Format.JSON: as_json,
    Format.GITHUB: _ci("github"),
    Format.SARIF: _ci("sarif"),
    Format.MARKDOWN: _ci("markdown"),
    Format.JUNIT: junit,
    Format.GITLAB: _ci("gitlab"),
}


def _message(fc: FactCheck) -> str:
    """A stale fact's finding message: ``k1 STALE: <reason>: <text, 100 characters>;
    <what to do>``."""
    text = shorten(fc.fact.text, 100, strip=True)
    return f"{fc.fact.key} STALE: {fc.reason}: {text}; {_advice(fc)}"


def _advice(fc) -> str:
    """What to do about a stale fact: read it again and verify it; when what it holds for
    is gone, verify would refuse, so fix or remove the note instead."""
    if fc.state in ("file gone", "declaration gone"):
        return (
            "fix the note's citation (check --fix repairs a file git renamed) or remove the"
            f" note, then import it again; 'brainmigrate verify {fc.fact.key}' refuses while"
            " it is gone"
        )
    return f"read the note again, then 'brainmigrate verify {fc.fact.key}'"
