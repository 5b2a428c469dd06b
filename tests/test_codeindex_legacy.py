"""``extract_file(..., legacy=True)``: the digests as fingerprints of ``digest_version`` 1
took them (a declaration's text with its whitespace runs folded, the file's top-level nodes
that are no comment), pinned to the values the extractor gave before token digests, so a
fingerprint taken then can still be compared (SPEC.md §Staleness)."""

from __future__ import annotations

import pytest

from brainmigrate.codeindex.extract import digest, extract_file

SAMPLES = {
    "rust": (
        "//! crate docs\n"
        "#[derive(Debug, Clone)]\n"
        "/// A point.\n"
        "pub struct Point {\n    pub x: i32, // x\n    y: i32,\n}\n\n"
        "const LIMIT: i32 = 3;\n\n"
        "impl Point {\n    #[inline]\n    pub fn sum(&self) -> i32 {\n"
        "        // add\n        self.x + self.y\n    }\n}\n"
    ),
    "typescript": (
        "// header\n"
        "export const Y = 4;\n"
        "export class Cart {\n  total = 3;\n  @Memo()\n  add(a: number, b: number): number {\n"
        "    return a + b; // sum\n  }\n}\n"
    ),
    "python": (
        '"""Module."""\nimport os\n\nX = 3\n\n\n@dataclass\nclass A:\n    y: int = 4\n\n'
        '    def f(self, a):\n        """Doc."""\n        # note\n        return a + 1\n'
    ),
    "go": (
        "package a\n\n// X is.\nconst X = 3\n\nvar (\n\tY int = 4\n)\n\n"
        "// F does.\nfunc F(a, b int) int {\n\treturn a + b\n}\n"
    ),
    "kotlin": (
        "package a\n\nclass FeeTable {\n    private val rates = mapOf(1 to 2)\n"
        "    @JvmStatic fun fee(x: Int): Int {\n        return x * 2\n    }\n}\n"
    ),
}

#: (has_error, rows, file digest) of each sample, as the extractor gave them before token
#: digests (EXTRACTOR_VERSION 2).
PINNED = {
    "rust": (
        False,
        (
            (
                "Point",
                "struct",
                None,
                4,
                7,
                4,
                "42656d42ad3c28dc866d8169",
                "fe099c0820aa66072661aaf9",
            ),
            ("x", "field", "Point", 5, 5, 5, "64b95a6ac82da46193102c0d", None),
            ("y", "field", "Point", 6, 6, 6, "298a4ec5a10db3ea676bdabb", None),
            ("LIMIT", "constant", None, 9, 9, 9, "b17143fabb2bc595c018f0d9", None),
            (
                "Point",
                "impl",
                None,
                11,
                17,
                11,
                "fab811612f8b93d349e9cac9",
                "d67dea645cd748728efc220b",
            ),
            (
                "sum",
                "method",
                "Point",
                13,
                16,
                13,
                "90507f24d3eeb25158626562",
                "39dd981a732288cf3a0ff6ac",
            ),
        ),
        "38922c3b5712b36366df84a6",
    ),
    "typescript": (
        False,
        (
            ("Y", "variable", None, 2, 2, 2, "2d6e4df6f210b5218898ecf3", None),
            (
                "Cart",
                "class",
                None,
                3,
                9,
                3,
                "904d3192a31b61e55f5a243d",
                "f2d3c9fe2b2b99219be27b62",
            ),
            ("total", "field", "Cart", 4, 4, 4, "c99ef21faddf29c3e39acfc3", None),
            (
                "add",
                "method",
                "Cart",
                6,
                8,
                6,
                "46f62bbc7bc879649f2fd08d",
                "820b024c84fe026796d23c98",
            ),
        ),
        "564008e2d5ed91282bbf08a1",
    ),
    "python": (
        False,
        (
            ("X", "variable", None, 4, 4, 4, "57059368ebc36ad5656f932c", None),
            ("A", "class", None, 7, 14, 8, "3e0b98c6021bffee6ca064bf", "c6805fe9194e9d9a57f06e85"),
            ("y", "field", "A", 9, 9, 9, "69f8d64cafead42350a96b8b", None),
            (
                "f",
                "method",
                "A",
                11,
                14,
                11,
                "f37edc9b49f6521f7610270c",
                "0d88aefbb0763835030f85cd",
            ),
        ),
        "d58e9cbad4d0db9cd578a6a4",
    ),
    "go": (
        False,
        (
            ("X", "constant", None, 4, 4, 4, "9e0389a795a840cbc62f0693", None),
            # found since grouped var specs are declarations: its text, folded
            ("Y", "variable", None, 7, 7, 7, digest(b"Y int = 4"), None),
            (
                "F",
                "function",
                None,
                11,
                13,
                11,
                "230d14c9402782ce8927a86a",
                "2b37b89ba69623de8c5a2245",
            ),
        ),
        "29a0eba655991a030299ff19",
    ),
    "kotlin": (
        False,
        (
            (
                "FeeTable",
                "class",
                None,
                3,
                8,
                3,
                "ca54c1e0b1d54aa649d3eef9",
                "ccb7a6820c9508bd9e764646",
            ),
            ("rates", "property", "FeeTable", 4, 4, 4, "927432b2b8697f8f69902f42", None),
            (
                "fee",
                "method",
                "FeeTable",
                5,
                7,
                5,
                "821f9bbecf0cfba7640236e7",
                "eeb311512c00bb22b15cf035",
            ),
        ),
        "f168c7eaa1a43ec7c96df472",
    ),
}


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_legacy_digests_are_the_ones_taken_before_token_digests(language):
    assert extract_file(SAMPLES[language].encode(), language, legacy=True) == PINNED[language]


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_token_digests_differ_from_the_legacy_ones(language):
    data = SAMPLES[language].encode()
    _error, rows, file_digest = extract_file(data, language)
    _error, old_rows, old_file_digest = PINNED[language]
    assert file_digest != old_file_digest
    assert [r[6] for r in rows] != [r[6] for r in old_rows]
    assert len(rows) == len(old_rows)


def test_legacy_digests_fold_whitespace_but_not_a_re_flow():
    """What token digests fix: ``(a,b)`` and ``( a, b )`` were two digests."""
    tight = extract_file(b"fn add(a:i32,b:i32)->i32{a+b}\n", "rust", legacy=True)[1][0]
    loose = extract_file(b"fn add( a: i32, b: i32 ) -> i32 { a + b }\n", "rust", legacy=True)
    assert tight[6:] != loose[1][0][6:]
