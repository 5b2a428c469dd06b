"""Repository URLs and git remotes as parts (SPEC.md §Anchors 1, "Links into the root's own
repository"), HTML attribute values and reference-style links as text spans."""

from __future__ import annotations

import pytest

from brainmigrate.read.links import (
    RepoUrl,
    file_url_path,
    html_targets,
    reference_links,
    remote_parts,
    repo_url_parts,
)


@pytest.mark.parametrize(
    "url, parts",
    [
        (
            "https://github.com/Acme/Shelf/blob/main/src/x.py",
            RepoUrl("github.com", "acme", "shelf", "src/x.py", "main"),
        ),
        (
            "https://github.com/o/r/tree/v2.1/docs/adr/",
            RepoUrl("github.com", "o", "r", "docs/adr/", "v2.1"),
        ),
        (
            "http://www.github.com/o/r.git/raw/3f2a9c1/README.md?plain=1#L3",
            RepoUrl("github.com", "o", "r", "README.md", "3f2a9c1"),
        ),
        (
            "https://gitlab.com/grp/sub/r/-/blob/main/app/x.rb",
            RepoUrl("gitlab.com", "grp/sub", "r", "app/x.rb", "main"),
        ),
        (
            "https://gitlab.example.org:8443/g/r/-/tree/dev/lib",
            RepoUrl("gitlab.example.org", "g", "r", "lib", "dev"),
        ),
        (
            "https://raw.githubusercontent.com/O/R/main/docs/My%20File.md",
            RepoUrl("github.com", "o", "r", "docs/My%20File.md", "main"),
        ),
        (
            "https://tree.example.com/blob/blob/r/blob/x/y.md",
            RepoUrl("tree.example.com", "blob/blob", "r", "y.md", "x"),
        ),
    ],
)
def test_repo_url_parts(url, parts):
    assert repo_url_parts(url) == parts


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/o/r",
        "https://github.com/o/r/blob/main",
        "https://github.com/o/r/blob/main/",
        "https://github.com/o/r/issues/12",
        "https://github.com/blob/main/x.py",  # no owner
        "https://raw.githubusercontent.com/o/r/main",
        "ftp://github.com/o/r/blob/main/x.py",
        "git@github.com:o/r.git",
        "github.com/o/r/blob/main/x.py",
    ],
)
def test_urls_that_name_no_file_of_a_repository(url):
    assert repo_url_parts(url) is None


@pytest.mark.parametrize(
    "remote, parts",
    [
        ("https://github.com/Acme/Shelf.git", ("github.com", "acme", "shelf")),
        ("https://github.com/acme/shelf", ("github.com", "acme", "shelf")),
        ("https://user:token@github.com/acme/shelf.git/", ("github.com", "acme", "shelf")),
        ("git@github.com:Acme/Shelf.git", ("github.com", "acme", "shelf")),
        ("github.com:acme/shelf", ("github.com", "acme", "shelf")),
        ("ssh://git@github.com/acme/shelf.git", ("github.com", "acme", "shelf")),
        ("ssh://git@gitlab.example.org:2222/grp/sub/r.git", ("gitlab.example.org", "grp/sub", "r")),
        ("git://example.org/o/r", ("example.org", "o", "r")),
        ("  https://www.github.com/o/r.git\n", ("github.com", "o", "r")),
    ],
)
def test_remote_parts(remote, parts):
    assert remote_parts(remote) == parts


@pytest.mark.parametrize(
    "remote",
    ["/srv/git/r.git", "../r", "file:///srv/git/o/r.git", "https://github.com/r", "C:/git/o/r"],
)
def test_remotes_that_name_no_hosted_repository(remote):
    assert remote_parts(remote) is None


def test_a_blob_url_and_its_remote_agree():
    url = repo_url_parts("https://GitHub.com/Acme/Shelf/blob/main/app/x.php")
    assert url[:3] == remote_parts("git@github.com:acme/shelf.git")


@pytest.mark.parametrize(
    "text, path",
    [
        ("file:///D:/dev/x.php", "D:/dev/x.php"),
        ("file:/D:/dev/x.php", "D:/dev/x.php"),
        ("file:///home/u/x.py", "/home/u/x.py"),
        ("file://localhost/srv/x", "/srv/x"),
        ("file://host/share/x", "//host/share/x"),
        ("file:/home/x", "/home/x"),
    ],
)
def test_file_url_path(text, path):
    assert text[file_url_path(text) :] == path


@pytest.mark.parametrize("text", ["file:", "file://", "file://localhost", "file:x.py", "files/x"])
def test_no_file_url_path(text):
    assert file_url_path(text) is None


def test_html_targets_spans():
    text = "<a class=x href=\"a b.md\" title='t'>x</a><img/src=i.png><p>href=no.md</p>"
    assert [(text[a:b], text[c:d]) for a, b, c, d in html_targets(text)] == [
        ("a b.md", '"a b.md"'),
        ("i.png", "i.png"),
    ]


def test_link_labels_fold_case_and_whitespace():
    from brainmigrate.read.notation import link_label

    assert link_label("  The\u00a0 Guide\t") == "the guide"
    assert link_label("STRASSE") == link_label("Straße")


def test_reference_links_spans():
    refs = {"a": "x.md", "b c": "y.md"}
    text = "![img][a] and [B\tC][] and [a] [a](z.md) [a]: q [b c] `x[a]` `y` [a]"
    assert [(text[s:e], t) for s, e, t in reference_links(text, refs)] == [
        ("[img][a]", "x.md"),
        ("[B\tC][]", "y.md"),
        ("[a]", "x.md"),
        ("[b c]", "y.md"),
        ("[a]", "x.md"),
    ]
    assert reference_links(text, refs)[-1][0] == len(text) - 3
