"""Write the golden cases whose bytes are not plain UTF-8 (SPEC.md §Notation, Decoding).

Run from anywhere: ``python tests/golden/make_decode_cases.py``; then regenerate the
expected reports (``pytest tests/test_golden.py --update-golden``) and review the diff.
"""

from __future__ import annotations

import codecs
from pathlib import Path

CASES = Path(__file__).parent / "cases"

# What Windows PowerShell's `Get-Content notes.txt > facts.md` writes: UTF-16 LE, a BOM,
# CRLF line ends.
POWERSHELL = (
    "# Notes from a Windows box\n"
    "+ the ledger lives in app/src/Foo.kt:12 LDG-6\n"
    "  and the old one in app/src/Gone.kt\n"
    "\n"
    "~ 账本按月结算，见 app/src/Bar.kt TER-9 <!-- 2026-09-23 13:16:09 win -->\n"
    "> [!note] a callout from PowerShell\n"
    "> still the callout\n"
    "! P0 outage\u3000with a full-width space\n"
    "= last line without a line end"
)


def utf16le_crlf() -> bytes:
    return codecs.BOM_UTF16_LE + POWERSHELL.replace("\n", "\r\n").encode("utf-16-le")


def utf16be() -> bytes:
    text = "+ big-endian UTF-16 fact about app/src/Foo.kt\n+ 第二条 TER-3\n+ emoji 😀 kept\n"
    return codecs.BOM_UTF16_BE + text.encode("utf-16-be")


def utf32le() -> bytes:
    text = "+ UTF-32 fact citing lib/util.py\n  continued 🐍\n+ 第二条\n"
    return codecs.BOM_UTF32_LE + text.encode("utf-32-le")


def lone_surrogate() -> bytes:
    # A lone high surrogate, a lone low one, a U+0000 and an odd last byte: each becomes
    # U+FFFD with a warning at its line and column.
    text = "+ before \ud800 after\n+ low \udc00 and nul \x00 here\n+ fine\n"
    return codecs.BOM_UTF16_LE + text.encode("utf-16-le", "surrogatepass") + b"!"


FILES = {
    "decode-utf16le-crlf.md": utf16le_crlf,
    "decode-utf16be.md": utf16be,
    "decode-utf32le.md": utf32le,
    "decode-lone-surrogate.md": lone_surrogate,
}

if __name__ == "__main__":
    for name, make in FILES.items():
        (CASES / name).write_bytes(make())
