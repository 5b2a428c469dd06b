"""A hundred phrases that are no paths (SPEC.md §Anchors 1): the token layer classifies each
as at most ``"maybe"`` (a citation only when a root knows it), never ``"file"`` or
``"folder"``, except the shapes SPEC names as cited paths that no root knows (unresolved)."""

from __future__ import annotations

import pytest

from brainmigrate.model import Segment
from brainmigrate.read.cited import cited_path
from brainmigrate.read.tokens import tokens

#: Phrases with "/" whose last segment has no extension: "maybe", each one whole token.
MAYBE = """and/or origin/main text/html 11/29/2026 v1.2/v1.3 TCP/IP I/O w/o either/or read/write
on/off yes/no true/false client/server input/output he/she his/her pass/fail CI/CD UI/UX A/B
24/7 1/2 50/50 km/h m/s feature/login main/master dev/prod staging/production HTTP/2
HTTP/1.1 TLS/SSL JSON/YAML GET/POST PUT/PATCH iOS/Android macOS/Linux Windows/Linux AWS/GCP
npm/yarn pnpm/npm ESM/CJS x86/arm64 amd64/arm64 linux/amd64 owner/repo org/team
user/password login/logout sign-in/sign-up open/close start/stop push/pull merge/rebase
tabs/spaces light/dark mobile/desktop frontend/backend read-only/read-write 3/4 2026/11/29
12/31/99 10/10 p50/p99 RFC/ADR Q3/Q4 H1/H2 L1/L2 v2/v3 api/v2 /api/v2 5%/day
import/export GraphQL/REST SQL/NoSQL Postgres/MySQL""".split()

#: Phrases that are no cited path at all: no "/", or a not-a-path filter holds.
NONE = """https://example.com/a/ www.example.com/x.html git@github.com:o/r.git src/**/*.ts
${HOME}/x.md %APPDATA%/app/x.json //pkg/api:server @repo//pkg:x <path>/x.md {a,b}/c.md
e.g. i.e. app.state.db v1.2.3 1.2.3 foo.bar TER-12 Node.js $PATH x/$Y/z.md mailto:x@y.org
/ ./ ../.. webview-ui/.../validate.ts src/…/x.py path/to/test.py path/to/file.py::test_x
Path/To/X.kt""".split()

#: SPEC.md §Anchors 1 names these as cited paths (an extension ends them) that no root
#: knows: "file" here, unresolved at the resolver, never gone.
SPEC_FILES = (
    "React/Next.js net/http.Client release/2.4.x application/vnd.api.folder gopkg.in/yaml.v3"
)


def test_there_are_a_hundred_phrases():
    assert len(MAYBE) + len(NONE) + len(SPEC_FILES.split()) >= 100
    assert len(set(MAYBE)) == len(MAYBE)


@pytest.mark.parametrize("phrase", MAYBE)
def test_a_phrase_with_a_slash_is_at_most_maybe(phrase):
    got = [(t.text, cited_path(t.text)) for t in tokens([Segment(1, 1, f"see {phrase}.")])]
    assert got == [(phrase, (phrase, "maybe"))]


@pytest.mark.parametrize("phrase", NONE)
def test_a_phrase_that_is_no_path(phrase):
    assert all(cited_path(t.text) is None for t in tokens([Segment(1, 1, phrase)]))
    assert cited_path(phrase) is None


def test_spec_names_these_as_paths_by_shape():
    got = [cited_path(t.text) for t in tokens([Segment(1, 1, SPEC_FILES)])]
    assert got == [(p, "file") for p in SPEC_FILES.split()]


def test_all_phrases_in_one_fact_give_no_file_or_folder():
    text = " ".join(MAYBE + NONE)
    kinds = {cited_path(t.text)[1] for t in tokens([Segment(1, 1, text)]) if cited_path(t.text)}
    assert kinds == {"maybe"}
