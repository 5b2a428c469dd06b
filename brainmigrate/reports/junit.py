"""The JUnit XML report of ``check`` (docs/check.md, Formats), built with ``xml.etree``."""

from __future__ import annotations

import re
from functools import cache

from brainmigrate.check import CheckResult
from brainmigrate.rules import Finding
from brainmigrate.shapes import shorten


@cache
def _xml_invalid() -> re.Pattern[str]:
    """Characters XML 1.0 cannot hold (compiled for a JUnit report only: start-up)."""
    return re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(value) -> str:
    """Text XML 1.0 can hold (other characters become U+FFFD)."""
    return _xml_invalid().sub("\ufffd", str(value))


def _case_name(fact) -> str:
    """A fact's testcase: its line and the first 80 characters of its text."""
    return f"line {fact.line}: {shorten(fact.text, 80, mark='')}"


def junit(result: CheckResult) -> str:
    """JUnit XML: a testsuite per notes file, a testcase per fact (named by its first line);
    a failure for each fact with findings that fail the check. Findings that belong to no
    fact and fail go to a testcase named ``(file)``. Suppressed and baselined counts are
    suite properties."""
    by_fact: dict[tuple[str, int | None], list[Finding]] = {}
    for f in result.findings:
        by_fact.setdefault((f.file, f.fact_line), []).append(f)
    facts_of: dict[str, list] = {}
    for fact in result.facts:
        facts_of.setdefault(fact.file, []).append(fact)
    import xml.etree.ElementTree as ET  # JUnit only: check's start-up does not load it

    top = ET.Element("testsuites", name="brainmigrate check")
    all_tests = all_failures = 0
    for path in result.files:
        suite = ET.SubElement(top, "testsuite", name=xml_text(path))
        cases: list[tuple[str, int | None, list[Finding]]] = [
            (
                f"line {fact.line}: {shorten(fact.text, 80, mark='')}",
                fact.line,
                by_fact.get((path, fact.line), []),
            )
            for fact in facts_of.get(path, [])
        ]
        loose = [f for f in by_fact.get((path, None), []) if f.fails(result.fail_on)]
        if loose:
            cases.append(("(file)", None, loose))
        mine = [f for key, fs in by_fact.items() if key[0] == path for f in fs]
        props = ET.SubElement(suite, "properties")
        for name, value in (
            ("fail-on", result.fail_on),
            ("suppressed", sum(f.suppressed for f in mine)),
            ("baselined", sum(f.baselined for f in mine)),
        ):
            ET.SubElement(props, "property", name=name, value=str(value))
        failures = 0
        for name, line, findings in cases:
            case = ET.SubElement(suite, "testcase", classname=xml_text(path), name=xml_text(name))
            case.set("file", xml_text(path))
            if line is not None:
                case.set("line", str(line))
            failing = [f for f in findings if f.fails(result.fail_on)]
            if failing:
                failures += 1
                fail = ET.SubElement(
                    case,
                    "failure",
                    message=xml_text(f"{failing[0].code} {failing[0].full_message}"),
                    type=failing[0].code,
                )
                fail.text = xml_text(
                    "\n".join(f"{f.where}: {f.code} {f.full_message}" for f in failing)
                )
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        all_tests += len(cases)
        all_failures += failures
    top.set("tests", str(all_tests))
    top.set("failures", str(all_failures))
    top.set("errors", "0")
    ET.indent(top)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(top, "unicode") + "\n"
