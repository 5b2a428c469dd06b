"""Rules and findings: every finding code (``RULES``, made from ``codes.CODES``) with its
name and severity, which codes a run reports (``Selection``), and ``Finding``, the value a
check, ``stale`` and ``--fix`` report, with its line-free ``fingerprint`` (the baseline's
key, ``finding_key``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from reprlib import recursive_repr

from brainmigrate.codes import CODES
from brainmigrate.digests import blake2b
from brainmigrate.read.files import InputError

_RANK = {"info": 0, "warning": 1, "error": 2}
#: Version of the JSON report and of the baseline file.
SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Rule:
    """A finding code: short ``name``, default ``severity`` and a one-line ``summary``."""

    code: str
    name: str
    severity: str
    summary: str

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, code, name, severity, summary) -> None:
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "severity", severity)
        object.__setattr__(self, "summary", summary)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(code={self.code!r}, name={self.name!r}, "
            f"severity={self.severity!r}, summary={self.summary!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.code, self.name, self.severity, self.summary) == (
                other.code,
                other.name,
                other.severity,
                other.summary,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.code, self.name, self.severity, self.summary))


#: Every finding code, in report order (docs/check.md, "Finding codes"), from ``CODES``.
RULES: dict[str, Rule] = {
    code: Rule(code, c.name, c.severity, c.summary) for code, c in CODES.items()
}


@dataclass(frozen=True, init=False, repr=False, eq=False)
class Selection:
    """Which codes a check reports, as ruff selects rules: a code is reported when the
    longest prefix of it in ``select`` (None: every code) or ``extend_select`` is longer than
    the longest in ``ignore`` (on a tie, ``ignore`` wins)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, select=None, extend_select=(), ignore=()) -> None:
        object.__setattr__(self, "select", select)
        object.__setattr__(self, "extend_select", extend_select)
        object.__setattr__(self, "ignore", ignore)
        self.__post_init__()

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(select={self.select!r}, "
            f"extend_select={self.extend_select!r}, ignore={self.ignore!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.select, self.extend_select, self.ignore) == (
                other.select,
                other.extend_select,
                other.ignore,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.select, self.extend_select, self.ignore))

    def __post_init__(self) -> None:
        for option, values in (
            ("--select", self.select or ()),
            ("--extend-select", self.extend_select),
            ("--ignore", self.ignore),
        ):
            for value in values:
                if not any(code.startswith(value) for code in RULES):
                    raise InputError(
                        f"{option} {value}: matches no finding code (codes: {', '.join(RULES)})"
                    )
                if option != "--ignore" and all(
                    code in STALE_CODES for code in RULES if code.startswith(value)
                ):
                    raise InputError(
                        f"{option} {value}: 'brainmigrate stale' reports it, check never does;"
                        f" check's codes: {', '.join(c for c in RULES if c not in STALE_CODES)}"
                    )

    def enabled(self, code: str) -> bool:
        """True when findings of ``code`` are reported."""
        chosen = (("BM",) if self.select is None else self.select) + self.extend_select
        on = max((len(p) for p in chosen if code.startswith(p)), default=-1)
        off = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return on > off

    def codes(self) -> list[str]:
        """The codes of ``RULES`` that ``check`` reports (``stale``'s own are left out)."""
        return [code for code in RULES if code not in STALE_CODES and self.enabled(code)]


def waived_by(code: str, suppress: frozenset[str]) -> str | None:
    """The entry of a fact's ``suppress`` that waives findings of ``code`` (``"gone"``
    waives BM101; a code or prefix waives what it starts), or None."""
    for entry in sorted(suppress):
        if code.startswith(entry) if entry != "gone" else code == "BM101":
            return entry
    return None


def suppression_text(entry: str) -> str:
    """The comment that wrote a ``suppress`` entry, for messages and SARIF."""
    return "allow-gone" if entry == "gone" else f"ignore {entry}"


#: Codes only ``brainmigrate stale`` reports (docs/staleness.md), never ``check``.
STALE_CODES = frozenset({"BM501"})


def rule(code: str) -> Rule:
    """The rule of ``code``; a code without one (a newer diagnostic) is an ``info`` rule."""
    return RULES.get(code) or Rule(code, code.lower(), "info", code)


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Hint:
    """Where a gone path may have moved: ``path`` (relative to its root; a folder with a
    trailing ``/``) and ``how`` it is known: ``git-rename``, ``same-name``,
    ``same-folder`` (the only folder of that name) or ``similar``."""

    path: str
    how: str

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, path, how) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "how", how)

    @recursive_repr()
    def __repr__(self) -> str:
        return f"{self.__class__.__qualname__}(path={self.path!r}, how={self.how!r})"

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.path, self.how) == (other.path, other.how)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.path, self.how))

    def describe(self) -> str:
        return f"moved? {self.path} ({HINT_HOW[self.how]})"


HINT_HOW = {
    "git-rename": "renamed in git history",
    "same-name": "the only file of that name",
    "same-folder": "the only folder of that name",
    "similar": "the closest path",
}


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Finding:
    """One thing a check reports, at ``file:line:col`` (1-based; ``col`` None: the line).

    ``subject`` is the cited path or the name a citation finding is about ("" for other
    findings); ``fact_line`` the first line of the fact it belongs to (None when it belongs
    to no fact) and ``fact_text`` the start of its text; ``fingerprint`` identifies it
    without line numbers (the baseline's key).
    """

    code: str
    severity: str
    file: str
    line: int | None
    col: int | None
    message: str
    subject: str = ""
    scope: str = ""
    fact_line: int | None = None
    fact_text: str = ""
    fingerprint: str = ""
    hint: Hint | None = None
    suppressed: bool = False
    baselined: bool = False
    #: the comment that suppressed it (``allow-gone``, ``ignore BM102``), when suppressed
    suppressed_by: str = ""

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self,
        code,
        severity,
        file,
        line,
        col,
        message,
        subject="",
        scope="",
        fact_line=None,
        fact_text="",
        fingerprint="",
        hint=None,
        suppressed=False,
        baselined=False,
        suppressed_by="",
    ) -> None:
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "severity", severity)
        object.__setattr__(self, "file", file)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "col", col)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "subject", subject)
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "fact_line", fact_line)
        object.__setattr__(self, "fact_text", fact_text)
        object.__setattr__(self, "fingerprint", fingerprint)
        object.__setattr__(self, "hint", hint)
        object.__setattr__(self, "suppressed", suppressed)
        object.__setattr__(self, "baselined", baselined)
        object.__setattr__(self, "suppressed_by", suppressed_by)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(code={self.code!r}, severity={self.severity!r}, "
            f"file={self.file!r}, line={self.line!r}, col={self.col!r}, "
            f"message={self.message!r}, subject={self.subject!r}, scope={self.scope!r}, "
            f"fact_line={self.fact_line!r}, fact_text={self.fact_text!r}, "
            f"fingerprint={self.fingerprint!r}, hint={self.hint!r}, "
            f"suppressed={self.suppressed!r}, baselined={self.baselined!r}, "
            f"suppressed_by={self.suppressed_by!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.code,
                self.severity,
                self.file,
                self.line,
                self.col,
                self.message,
                self.subject,
                self.scope,
                self.fact_line,
                self.fact_text,
                self.fingerprint,
                self.hint,
                self.suppressed,
                self.baselined,
                self.suppressed_by,
            ) == (
                other.code,
                other.severity,
                other.file,
                other.line,
                other.col,
                other.message,
                other.subject,
                other.scope,
                other.fact_line,
                other.fact_text,
                other.fingerprint,
                other.hint,
                other.suppressed,
                other.baselined,
                other.suppressed_by,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(
            (
                self.code,
                self.severity,
                self.file,
                self.line,
                self.col,
                self.message,
                self.subject,
                self.scope,
                self.fact_line,
                self.fact_text,
                self.fingerprint,
                self.hint,
                self.suppressed,
                self.baselined,
                self.suppressed_by,
            )
        )

    @property
    def rule(self) -> Rule:
        return rule(self.code)

    @property
    def where(self) -> str:
        """``file:line:col`` (``file:line`` without a column, ``file`` without a line)."""
        out = self.file
        if self.line is not None:
            out += f":{self.line}"
            if self.col is not None:
                out += f":{self.col}"
        return out

    @property
    def full_message(self) -> str:
        """The message, with the "moved?" hint when there is one."""
        return f"{self.message}; {self.hint.describe()}" if self.hint else self.message

    def at_or_above(self, level: str) -> bool:
        return _RANK[self.severity] >= _RANK[level]

    def fails(self, fail_on: str) -> bool:
        """At or above ``fail_on`` and neither suppressed nor in the baseline."""
        return self.at_or_above(fail_on) and not self.suppressed and not self.baselined


def finding_key(code: str, scope: str, text: str, subject: str) -> str:
    """A finding's identity without line numbers: rule, scope, normalized fact text (case
    and whitespace runs folded) and the cited path or name. 32 hex digits: what a
    ``Finding`` holds as its ``fingerprint``, the baseline's key and the CI formats'."""
    data = "\x1f".join((code, scope, _text_digest(text), subject))
    return blake2b(data.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@lru_cache(maxsize=256)
def _text_digest(text: str) -> str:
    """Digest of the text with case and whitespace runs folded; cached, as a fact with many
    findings asks for it again (a long text is then read once, not once per finding)."""
    norm = " ".join(text.casefold().split())
    return blake2b(norm.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
