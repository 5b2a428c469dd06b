"""Declarations per language: names, kinds, categories, containers, spans and digests.

Each case is a small source file in ``tests/codeindex_cases/``. The expectations were
printed from the extractor once and reviewed line by line against the sources.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from brainmigrate.codeindex.extract import extract, rows_to_declarations
from brainmigrate.codeindex.languages import language_for
from brainmigrate.codeindex.model import Declaration

CASES = Path(__file__).with_name("codeindex_cases")

# file -> [(qualname, kind, category, lines, name_line, has_body)] in source order; a
# variable, constant, field or property with a value has its value as body
EXPECTED = {
    "Sample.cs": [
        ("Demo", "namespace", "other", (3, 35), 3, True),
        ("Demo.IGateway", "interface", "type", (5, 8), 5, True),
        ("Demo.IGateway.Charge", "method", "function", (7, 7), 7, False),
        ("Demo.Point", "struct", "type", (10, 13), 10, True),
        ("Demo.Point.X", "field", "other", (12, 12), 12, False),
        ("Demo.Color", "enum", "type", (15, 15), 15, True),
        ("Demo.Color.Red", "enum_member", "other", (15, 15), 15, False),
        ("Demo.Color.Green", "enum_member", "other", (15, 15), 15, False),
        ("Demo.Payment", "class", "type", (17, 32), 17, True),
        ("Demo.Payment.count", "field", "other", (19, 19), 19, False),
        ("Demo.Payment.Name", "property", "other", (21, 21), 21, False),
        ("Demo.Payment.Payment", "constructor", "function", (23, 26), 23, True),
        ("Demo.Payment.Charge", "method", "function", (28, 31), 28, True),
        ("Demo.Person", "record", "type", (34, 34), 34, False),
    ],
    "Sample.java": [
        ("Shape", "interface", "type", (6, 8), 6, True),
        ("Shape.area", "method", "function", (7, 7), 7, False),
        ("Circle", "class", "type", (10, 25), 10, True),
        ("Circle.r", "field", "other", (11, 11), 11, False),
        ("Circle.d", "field", "other", (11, 11), 11, False),
        ("Circle.SIDES", "field", "other", (12, 12), 12, True),
        ("Circle.Circle", "constructor", "function", (14, 17), 14, True),
        ("Circle.area", "method", "function", (19, 22), 20, True),
        ("Circle.Unit", "enum", "type", (24, 24), 24, True),
        ("Circle.Unit.CM", "enum_constant", "other", (24, 24), 24, False),
        ("Circle.Unit.MM", "enum_constant", "other", (24, 24), 24, False),
        ("Pair", "record", "type", (27, 31), 27, True),
        ("Pair.Pair", "constructor", "function", (28, 30), 28, True),
    ],
    "Sample.kt": [
        ("Handler", "typealias", "type", (3, 3), 3, False),
        ("Gateway", "interface", "type", (5, 7), 5, True),
        ("Gateway.charge", "method", "function", (6, 6), 6, False),
        ("Color", "enum", "type", (9, 12), 9, True),
        ("Color.RED", "enum_entry", "other", (10, 10), 10, False),
        ("Color.GREEN", "enum_entry", "other", (11, 11), 11, False),
        ("Point", "class", "type", (14, 29), 14, True),
        ("Point.x", "property", "other", (14, 14), 14, False),
        ("Point.y", "property", "other", (14, 14), 14, False),
        ("Point.norm", "property", "other", (15, 15), 15, False),
        ("Point.constructor", "constructor", "function", (18, 20), 18, True),
        ("Point.scale", "method", "function", (22, 24), 22, True),
        ("Point.Companion", "companion", "type", (26, 28), 26, True),
        ("Point.Companion.origin", "method", "function", (27, 27), 27, True),
        ("Registry", "object", "type", (31, 33), 31, True),
        ("Registry.SIZE", "property", "other", (32, 32), 32, True),
        ("topLevel", "function", "function", (35, 35), 35, True),
    ],
    "Sample.scala": [
        ("Shape", "trait", "type", (3, 5), 3, True),
        ("Shape.area", "method", "function", (4, 4), 4, False),
        ("Square", "class", "type", (7, 11), 7, True),
        ("Square.sides", "val", "other", (8, 8), 8, False),
        ("Square.area", "method", "function", (10, 10), 10, True),
        ("Square", "object", "type", (13, 17), 13, True),
        ("Square.unit", "method", "function", (14, 16), 14, True),
        ("Color", "enum", "type", (19, 21), 19, True),
        ("Color.Red", "enum_case", "other", (20, 20), 20, False),
        ("Color.Green", "enum_case", "other", (20, 20), 20, False),
        ("Length", "typealias", "type", (23, 23), 23, False),
        ("helper", "function", "function", (25, 25), 25, True),
    ],
    "Sample.swift": [
        ("Shape", "protocol", "type", (3, 6), 3, True),
        ("Shape.area", "method", "function", (4, 4), 4, False),
        ("Shape.name", "property", "other", (5, 5), 5, False),
        ("Square", "struct", "type", (8, 19), 8, True),
        ("Square.side", "property", "other", (9, 9), 9, False),
        ("Square.name", "property", "other", (10, 10), 10, True),
        ("Square.init", "constructor", "function", (12, 14), 12, True),
        ("Square.area", "method", "function", (16, 18), 16, True),
        ("Direction", "enum", "type", (21, 23), 21, True),
        ("Direction.north", "enum_case", "other", (22, 22), 22, False),
        ("Direction.south", "enum_case", "other", (22, 22), 22, False),
        ("Counter", "class", "type", (25, 31), 25, True),
        ("Counter.count", "property", "other", (26, 26), 26, True),
        ("Counter.increment", "method", "function", (28, 30), 28, True),
        ("Square", "extension", "other", (33, 37), 33, True),
        ("Square.perimeter", "method", "function", (34, 36), 34, True),
        ("Length", "typealias", "type", (39, 39), 39, False),
        ("helper", "function", "function", (41, 43), 41, True),
    ],
    "sample.c": [
        ("MAX_ITEMS", "macro", "other", (3, 3), 3, False),
        ("point", "struct", "type", (5, 8), 5, True),
        ("point.x", "field", "other", (6, 6), 6, False),
        ("point.y", "field", "other", (7, 7), 7, False),
        ("point_t", "typedef", "type", (10, 10), 10, False),
        ("color", "enum", "type", (12, 12), 12, True),
        ("counter", "variable", "other", (14, 14), 14, True),
        ("area", "prototype", "function", (16, 16), 16, False),
        ("area", "function", "function", (18, 21), 18, True),
        ("name_of", "function", "function", (23, 26), 23, True),
    ],
    "sample.cpp": [
        ("geo", "namespace", "other", (3, 22), 3, True),
        ("geo.Shape", "class", "type", (5, 9), 5, True),
        ("geo.Shape.area", "method", "function", (7, 7), 7, False),
        ("geo.Shape.sides", "field", "other", (8, 8), 8, False),
        ("geo.Square", "class", "type", (11, 18), 11, True),
        ("geo.Square.Square", "method", "function", (13, 13), 13, True),
        ("geo.Square.area", "method", "function", (14, 14), 14, True),
        ("geo.Square.side", "field", "other", (17, 17), 17, False),
        ("geo.Shape_total", "prototype", "function", (20, 20), 20, False),
        ("twice", "function", "function", (24, 27), 25, True),
        ("geo.Shape_total", "function", "function", (29, 31), 29, True),
        ("Name", "typealias", "type", (33, 33), 33, False),
    ],
    "sample.go": [
        ("Limit", "constant", "other", (5, 5), 5, True),
        ("Reader", "interface", "type", (7, 9), 7, True),
        ("Reader.Read", "method", "function", (8, 8), 8, False),
        ("Buffer", "struct", "type", (11, 14), 11, True),
        ("Buffer.data", "field", "other", (12, 12), 12, False),
        ("Buffer.pos", "field", "other", (13, 13), 13, False),
        ("Name", "typealias", "type", (16, 16), 16, False),
        ("Buffer.Read", "method", "function", (18, 22), 18, True),
        ("NewBuffer", "function", "function", (24, 27), 24, True),
    ],
    "sample.js": [
        ("VERSION", "variable", "other", (1, 1), 1, True),
        ("Animal", "class", "type", (3, 9), 3, True),
        ("Animal.legs", "field", "other", (4, 4), 4, True),
        ("Animal.speak", "method", "function", (6, 8), 6, True),
        ("counter", "function", "function", (11, 13), 11, True),
        ("add", "function", "function", (15, 17), 15, True),
        ("main", "function", "function", (19, 21), 19, True),
    ],
    "sample.php": [
        ("App\\Billing", "namespace", "other", (3, 3), 3, False),
        ("Gateway", "interface", "type", (5, 8), 5, True),
        ("Gateway.charge", "method", "function", (7, 7), 7, False),
        ("Logs", "trait", "type", (10, 16), 10, True),
        ("Logs.log", "method", "function", (12, 15), 12, True),
        ("Payment", "class", "type", (18, 30), 18, True),
        ("Payment.LIMIT", "constant", "other", (22, 22), 22, True),
        ("Payment.count", "property", "other", (24, 24), 24, True),
        ("Payment.charge", "method", "function", (26, 29), 26, True),
        ("helper", "function", "function", (32, 35), 32, True),
    ],
    "sample.py": [
        ("LIMIT", "variable", "other", (5, 5), 5, True),
        ("Account", "class", "type", (8, 20), 9, True),
        ("Account.owner", "field", "other", (12, 12), 12, True),
        ("Account.deposit", "method", "function", (14, 16), 14, True),
        ("Account.Ledger", "class", "type", (18, 20), 18, True),
        ("Account.Ledger.post", "method", "function", (19, 20), 19, True),
        ("top_level", "function", "function", (23, 27), 23, True),
        ("top_level.inner", "function", "function", (24, 25), 24, True),
    ],
    "sample.rb": [
        ("Billing", "module", "other", (1, 19), 1, True),
        ("Billing.RATE", "constant", "other", (2, 2), 2, True),
        ("Billing.Invoice", "class", "type", (4, 18), 4, True),
        ("Billing.Invoice.total", "attribute", "other", (5, 5), 5, False),
        ("Billing.Invoice.items", "attribute", "other", (5, 5), 5, False),
        ("Billing.Invoice.initialize", "method", "function", (7, 9), 7, True),
        ("Billing.Invoice.build", "method", "function", (11, 13), 11, True),
        ("Billing.Invoice.paid?", "method", "function", (15, 17), 15, True),
        ("helper", "method", "function", (21, 23), 21, True),
    ],
    "sample.rs": [
        ("MAX", "constant", "other", (3, 3), 3, True),
        ("Stack", "struct", "type", (5, 8), 6, True),
        ("Stack.items", "field", "other", (7, 7), 7, False),
        ("Op", "enum", "type", (10, 13), 10, True),
        ("Op.Push", "variant", "other", (11, 11), 11, False),
        ("Op.Pop", "variant", "other", (12, 12), 12, False),
        ("Shape", "trait", "type", (15, 17), 15, True),
        ("Shape.area", "method", "function", (16, 16), 16, False),
        ("Stack", "impl", "other", (19, 27), 19, True),
        ("Stack.new", "method", "function", (20, 22), 20, True),
        ("Stack.push", "method", "function", (24, 26), 24, True),
        ("Stack", "impl", "other", (29, 33), 29, True),
        ("Stack.fmt", "method", "function", (30, 32), 30, True),
        ("Pair", "typealias", "type", (35, 35), 35, False),
        ("helper", "function", "function", (37, 39), 37, True),
    ],
    "sample.ts": [
        ("Gateway", "interface", "type", (1, 4), 1, True),
        ("Gateway.charge", "method", "function", (2, 2), 2, False),
        ("Gateway.name", "field", "other", (3, 3), 3, False),
        ("Id", "typealias", "type", (6, 6), 6, False),
        ("Color", "enum", "type", (8, 11), 8, True),
        ("Payment", "class", "type", (13, 19), 13, True),
        ("Payment.name", "field", "other", (14, 14), 14, True),
        ("Payment.charge", "method", "function", (16, 18), 16, True),
        ("double", "function", "function", (21, 23), 21, True),
        ("greet", "function", "function", (25, 27), 25, True),
        ("Util", "namespace", "other", (29, 31), 29, True),
        ("Util.helper", "function", "function", (30, 30), 30, True),
    ],
    "sample.tsx": [
        ("Props", "interface", "type", (3, 5), 3, True),
        ("Props.label", "field", "other", (4, 4), 4, False),
        ("Button", "function", "function", (7, 9), 7, True),
        ("Panel", "class", "type", (11, 15), 11, True),
        ("Panel.render", "method", "function", (12, 14), 12, True),
    ],
}

# file -> (old text, new text, (qualname, kind) whose body changes, (qualname, kind) that does not)
BODY_EDITS = {
    "sample.py": (
        "return total\n",
        "return total * 2\n",
        ("Account.deposit", "method"),
        ("top_level", "function"),
    ),
    "Sample.kt": (
        "Point(x * k, y * k)",
        "Point(x * k, y)",
        ("Point.scale", "method"),
        ("topLevel", "function"),
    ),
    "Sample.java": (
        "Math.PI * r * r;",
        "Math.PI * r;",
        ("Circle.area", "method"),
        ("Shape", "interface"),
    ),
    "sample.ts": ("return x * 2;", "return x * 3;", ("double", "function"), ("greet", "function")),
    "sample.tsx": (
        "<div>{this.props.label}</div>",
        "<div />",
        ("Panel.render", "method"),
        ("Button", "function"),
    ),
    "sample.js": ("return a + b;", "return a - b;", ("add", "function"), ("main", "function")),
    "sample.go": (
        "b.pos += n",
        "b.pos += 2 * n",
        ("Buffer.Read", "method"),
        ("NewBuffer", "function"),
    ),
    "sample.rs": ("x + 1", "x + 2", ("helper", "function"), ("Stack.new", "method")),
    "Sample.cs": (
        "amount > 0;",
        "amount >= 0;",
        ("Demo.Payment.Charge", "method"),
        ("Demo.Payment.Payment", "constructor"),
    ),
    "sample.rb": (
        "total.zero?",
        "total.positive?",
        ("Billing.Invoice.paid?", "method"),
        ("helper", "method"),
    ),
    "sample.c": ("return w * h;", "return w + h;", ("area", "function"), ("name_of", "function")),
    "sample.cpp": (
        "return v + v;",
        "return v * 2;",
        ("twice", "function"),
        ("geo.Shape_total", "function"),
    ),
    "Sample.swift": (
        "count += 1",
        "count += 2",
        ("Counter.increment", "method"),
        ("helper", "function"),
    ),
    "sample.php": (
        "return $x + 1;",
        "return $x + 2;",
        ("helper", "function"),
        ("Payment.charge", "method"),
    ),
    "Sample.scala": (
        "Square(1.0)",
        "Square(2.0)",
        ("Square.unit", "method"),
        ("helper", "function"),
    ),
}

LANGUAGES = {
    "sample.py": "python",
    "Sample.kt": "kotlin",
    "Sample.java": "java",
    "sample.ts": "typescript",
    "sample.tsx": "tsx",
    "sample.js": "javascript",
    "sample.go": "go",
    "sample.rs": "rust",
    "Sample.cs": "csharp",
    "sample.rb": "ruby",
    "sample.c": "c",
    "sample.cpp": "cpp",
    "Sample.swift": "swift",
    "sample.php": "php",
    "Sample.scala": "scala",
}


def declarations(name: str, text: bytes) -> list[Declaration]:
    language = LANGUAGES[name]
    _has_error, rows = extract(text, language)
    return rows_to_declarations(rows, name, language)


def find(decls: list[Declaration], qualname: str, kind: str) -> Declaration:
    (hit,) = [d for d in decls if d.qualname == qualname and d.kind == kind]
    return hit


def test_every_case_file_is_covered() -> None:
    assert sorted(p.name for p in CASES.iterdir()) == sorted(EXPECTED)
    assert set(EXPECTED) == set(BODY_EDITS) == set(LANGUAGES)
    assert len(set(LANGUAGES.values())) == 15


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_language_map(name: str) -> None:
    assert language_for(name, headers_are_cpp=False) == LANGUAGES[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_declarations(name: str) -> None:
    text = (CASES / name).read_bytes()
    assert extract(text, LANGUAGES[name])[0] is False  # no syntax error in the samples
    decls = declarations(name, text)
    got = [
        (d.qualname, d.kind, d.category, d.lines, d.name_line, d.body_digest is not None)
        for d in decls
    ]
    assert got == EXPECTED[name]
    assert all(d.path == name and d.language == LANGUAGES[name] for d in decls)
    assert all(len(d.signature_digest) == 24 for d in decls)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_digests_ignore_whitespace_line_endings_and_bom(name: str) -> None:
    text = (CASES / name).read_bytes()
    base = declarations(name, text)
    crlf = text.replace(b"\n", b"\r\n")
    # Interior spaces doubled, trailing blanks added (the C grammars flag a trailing
    # blank after `#include <…>` as a syntax error; the declarations are unaffected).
    spaced = re.sub(rb"(?<=\S) (?=\S)", b"  ", text).replace(b"\n", b" \t\n")
    assert spaced != text
    for variant in (crlf, b"\xef\xbb\xbf" + crlf, b"\xef\xbb\xbf" + text, spaced):
        assert declarations(name, variant) == base


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_body_digest_follows_the_body(name: str) -> None:
    old, new, changed, unchanged = BODY_EDITS[name]
    text = (CASES / name).read_text(encoding="utf-8")
    assert text.count(old) == 1
    before = declarations(name, text.encode())
    after = declarations(name, text.replace(old, new).encode())
    b, a = find(before, *changed), find(after, *changed)
    assert b.body_digest is not None and a.body_digest is not None
    assert a.body_digest != b.body_digest
    assert a.signature_digest == b.signature_digest
    assert find(after, *unchanged) == find(before, *unchanged)


def test_signature_digest_follows_the_header() -> None:
    text = (CASES / "sample.py").read_text(encoding="utf-8")
    before = find(declarations("sample.py", text.encode()), "Account.deposit", "method")
    edited = text.replace("def deposit(self, amount):", "def deposit(self, amount, note):")
    after = find(declarations("sample.py", edited.encode()), "Account.deposit", "method")
    assert after.signature_digest != before.signature_digest
    assert after.body_digest != before.body_digest


def test_syntax_errors_keep_declarations() -> None:
    has_error, rows = extract(
        b"class Good:\n    def ok(self):\n        return 1\n\ndef broken(:\n", "python"
    )
    assert has_error is True
    assert [(r[0], r[1], r[2]) for r in rows][:2] == [
        ("Good", "class", None),
        ("ok", "method", "Good"),
    ]


def test_h_headers_follow_the_root() -> None:
    assert language_for("inc/x.h", headers_are_cpp=True) == "cpp"
    assert language_for("inc/x.h", headers_are_cpp=False) == "c"
    assert language_for("README.md", headers_are_cpp=False) is None
    assert language_for("Makefile", headers_are_cpp=False) is None
