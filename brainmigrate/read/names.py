"""CamelCase names in a token (SPEC.md §Anchors 3): pure text.

Linear in its input (tests/test_linear.py).
"""

from __future__ import annotations

from brainmigrate.patterns import lazy

_IDENT = lazy(r"[A-Za-z_][A-Za-z0-9_]*")
#: An identifier in any script: a letter, then letters, digits or ``_`` (``ÜberGateway``).
_UNICODE_IDENT = lazy(r"[^\W\d_]\w*")
_HUMP = lazy(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*|[a-z0-9]+")
_NAME_SEP = lazy(r"::|[.#<>,]")


def camelcase_names(text: str) -> list[str]:
    """CamelCase identifiers in a token (SPEC.md §Anchors 3).

    An identifier starting upper-case, holding a lower-case letter and splitting into two or
    more words (an upper-case run is a word); as the whole token or a part of it between
    ``.``, ``::``, ``#`` (``crate::store::LedgerStore``, ``PaymentGateway#charge``) or a
    type argument's ``< > ,`` (``Map<String,LedgerRow>``).
    """
    out = []
    for part in _NAME_SEP.split(text):
        if not part:
            continue
        if not part.isascii():
            name = _unicode_name(part)
            if name is not None:
                out.append(name)
        elif (
            part[0].isupper()
            and _IDENT.fullmatch(part)
            and not part.isupper()
            and sum(len(_HUMP.findall(w)) for w in part.split("_") if w) >= 2
        ):
            out.append(part)
    return out


def _unicode_name(part: str) -> str | None:
    """``part`` (not ASCII) in NFC when it is a CamelCase name by the rule ASCII names
    follow, with "upper-case", "lower-case" and "digit" as Unicode says (``ÜberGateway``,
    ``ÄnderungsLog``, ``ЛедгерRepository``); else None. A titlecase letter (``ǅ``) counts
    as upper-case; letters without case (Han, Arabic) as lower-case, so they never start a
    word."""
    import unicodedata

    part = unicodedata.normalize("NFC", part)
    first = part[0]
    if not ((first.isupper() or first.istitle()) and _UNICODE_IDENT.fullmatch(part)):
        return None
    if part.isupper():
        return None
    shape = "".join(
        "A" if c.isupper() or c.istitle() else "0" if c.isdigit() else "a" for c in part
    )
    words = sum(len(_HUMP.findall(w)) for w in shape.split("_") if w)
    return part if words >= 2 else None
