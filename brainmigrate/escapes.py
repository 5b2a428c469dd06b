"""Text from input (file names, scopes, fact text, baseline values, option values) as each
kind of output may hold it: one function per kind, each saying its rule.

- ``terminal``: a message on a terminal (more than one line allowed);
- ``one_line``: a value that must stay on its line (a finding, an error, a file name);
- ``diff_name``: a file name in a ``--diff`` header, quoted as git quotes it;
- ``markdown``: a value inside a Markdown report, a pull-request comment or a step summary;
- ``github_data`` / ``github_property``: a GitHub Actions workflow command's message and
  properties.

JSON (``shapes.to_json``), XML (``xml.etree``) and HTML (jinja2's autoescape) are escaped
by their libraries; YAML front matter by ``exports.knowledge.yaml_scalar``.
"""

from __future__ import annotations

from brainmigrate.patterns import lazy

#: What no output prints as it is: C0 and C1 control characters but tab and newline, and
#: DEL. (A file name's bytes that are not UTF-8 are made U+FFFD where the name is read:
#: ``fsutil.printable``; a larger table would slow every value a report prints.)
_CONTROLS = dict.fromkeys([*range(0, 9), *range(11, 32), 127, *range(0x80, 0xA0)], "\ufffd")

#: What a value that must stay on one line must not hold either: tab, line breaks (a
#: file name with a newline would forge a second finding, error or hunk line) and the
#: bidirectional overrides and isolates (they make the rest of a line read reversed).
_LINE_BREAKERS = {
    **_CONTROLS,
    **dict.fromkeys([9, 10, 13, 0x2028, 0x2029], "\ufffd"),
    **dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A)], "\ufffd"),
}


def terminal(text) -> str:
    """``text`` as a terminal may show it: every control character but tab and newline
    as U+FFFD, so a scope or a path cannot move the cursor or recolour the terminal.
    Non-strings are ``str()``-ed."""
    return str(text).translate(_CONTROLS)


def one_line(value):
    """``value`` as text that stays on its line (a finding, a one-line error, a name in a
    summary): ``terminal``, and tab, CR, LF, U+2028/U+2029 and the bidirectional controls
    as U+FFFD too, so ``a\\nb`` shows as ``a\ufffdb``. Values that are not strings pass
    unchanged (a number, None)."""
    return value.translate(_LINE_BREAKERS) if isinstance(value, str) else value


#: The C escapes git writes for these bytes in a quoted name (``quote.c``, ``sq_lookup``).
_C_ESCAPES = {7: b"\\a", 8: b"\\b", 9: b"\\t", 10: b"\\n", 11: b"\\v", 12: b"\\f", 13: b"\\r"}
_C_ESCAPES |= {ord('"'): b'\\"', ord("\\"): b"\\\\"}


def diff_name(prefix: bytes, name: bytes) -> bytes:
    """``prefix + name`` as git writes it in a diff header (``--- a/…``), by git's quoting
    rules with ``core.quotePath`` on (git's ``quote_c_style``): a name holding a control
    character, ``"``, ``\\`` or a byte of 0x80 or more is written in double quotes, those
    bytes as C escapes (``\\n``, ``\\t``, ``\\"``, ``\\\\``) or three-digit octal
    (``\\303``); any other name as it is. ``git apply`` and GNU ``patch`` read the quoted
    form, so a name with a line break cannot forge a header or a hunk."""
    whole = prefix + name
    if not any(b < 0x20 or b >= 0x7F or b in (0x22, 0x5C) for b in whole):
        return whole
    out = bytearray(b'"')
    for b in whole:
        if b in _C_ESCAPES:
            out += _C_ESCAPES[b]
        elif b < 0x20 or b >= 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return bytes(out + b'"')


#: Markdown punctuation that could start markup inside a line (emphasis, code spans,
#: links and images, table cells, strike-through, headings), put behind a backslash.
_MD_SPECIAL = lazy(r"([\\`*_\[\]|~#!])")
#: HTML's three, as entities: every renderer reads those as text (a backslash before
#: ``<`` is CommonMark's, not every Markdown's).
_MD_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
#: ``@`` before a user or team name (which starts with a letter or digit) and not inside a
#: word (``a@b.org``): GitHub would turn ``@user`` into a mention.
_MENTION = lazy(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")


def markdown(value) -> str:
    """``value`` as inline Markdown text that renders as it reads (GitHub-flavoured: the
    Markdown report, a pull-request comment, a step summary): whitespace runs (line
    breaks included) as one space, so it can open no heading, list or table row;
    ``\\ ` * _ [ ] | ~ # !`` behind a backslash, so it opens no code span, emphasis,
    link, image or table cell; ``& < >`` as ``&amp; &lt; &gt;``, so it opens no HTML tag
    or entity; ``@name`` as ``@`` U+200B ``name`` (a backslash does not stop GitHub's
    mentions, which are found in the rendered text; a zero-width space does, and shows
    nothing); other control characters as U+FFFD."""
    text = " ".join(str("" if value is None else value).split()).translate(_LINE_BREAKERS)
    text = _MD_SPECIAL.sub(r"\\\1", text).translate(_MD_HTML)
    return _MENTION.sub("@\u200b", text)


def github_data(value: str) -> str:
    """A GitHub workflow command's message: ``%`` as ``%25``, CR as ``%0D``, LF as
    ``%0A`` (the runner's own escapes, docs "Workflow commands"); other control
    characters as U+FFFD, so the log shows what the notes say."""
    return terminal(value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def github_property(value: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): as ``github_data``,
    and ``:`` as ``%3A``, ``,`` as ``%2C``, so it cannot end the property list."""
    return github_data(value).replace(":", "%3A").replace(",", "%2C")
