"""Where the facts ``put`` writes are anchored: the anchors a caller names, the one a
``file:`` or ``symbol:`` scope names, and those the text names, as an import reads a
line's (SPEC.md §Anchors), each in the put's roots and never outside them.

An anchor is a path (a file or a folder a root holds), ``path#Container.name`` (a
declaration the file holds) or a symbol (declared in exactly one file of the first root
that declares it, types before functions). A path that climbs out of every root (``..``,
an absolute path elsewhere, a symlink leading out) is refused, as is one no root holds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from brainmigrate.fsutil import printable
from brainmigrate.model import Anchor, FactRecord
from brainmigrate.roots import Root, normalize, remote_of, store_base


class Places:
    """The put's roots (``--root``, default the current folder; named as the store at
    ``store`` records them) and what anchoring in them needs, made once a call.
    Raises ``read.files.InputError`` for a root that is no folder."""

    def __init__(self, roots: Sequence[str | os.PathLike], store: Path, cache_dir=None) -> None:
        from brainmigrate.importer import make_roots

        self.roots: list[Root] = make_roots(roots, store)
        self.cache_dir = cache_dir
        self.base = store_base(store)
        self._indexes: dict[str, object] = {}
        self._used: dict[str, Root] = {}

    def labels(self, roots: Sequence[Root] | None = None) -> str:
        return ", ".join(r.label for r in (roots or self.roots))

    def recorded(self) -> list[tuple[str, str | None]]:
        """``(name, remote)`` of the roots an anchor of this put was placed in."""
        return [(r.name, remote_of(r.path)) for r in self._used.values()]

    # --- the facts' anchors

    def anchors(self, checked: Sequence) -> list[tuple[str, list[Anchor], list[str]]]:
        """Each ``put.Checked`` fact's scope, anchors and gone citations, in order: its
        scope's anchor, the anchors it names, then what its text cites (as an import reads
        it). A ``file:`` or ``symbol:`` scope comes back with the path its anchor found
        (``file:./src//Foo.kt`` and ``file:/abs/root/src/Foo.kt`` are ``file:src/Foo.kt``:
        one scope, so one fact). Raises ``put.PutError`` naming the anchor."""
        from brainmigrate.put import AnchorText

        named, scopes = [], []
        for c in checked:
            f = c.fact
            order = self._order(f.root, f"{f.where}root")
            out = []
            scope, given = f.scope, _scope_anchor(f.scope)
            if given is not None:
                a = self.anchor(given, order, f"{f.where}scope")
                out.append(a)
                if a.symbol is None:
                    scope = f"file:{a.path}"
                elif given.path:
                    scope = f"symbol:{a.path}#{a.symbol}"
            scopes.append(scope)
            for i, a in enumerate(f.anchors):
                where = f"{f.where}anchors[{i}]"
                here = self._order(a.root, f"{where}.root") if a.root else order
                out.append(self.anchor(AnchorText(a.path, a.symbol), here, where))
            named.append(out)
        cited = self._cited(checked)
        return [
            (scope, list(dict.fromkeys([*mine, *anchors])), gone)
            for scope, mine, (anchors, gone) in zip(scopes, named, cited, strict=True)
        ]

    def _order(self, given: str | None, where: str) -> list[Root]:
        """The roots an anchor is looked for in: ``given`` alone (one of the put's roots,
        by path or by recorded name), else every root in order."""
        if given is None:
            return self.roots
        from brainmigrate.put import PutError

        real = os.path.realpath(os.path.abspath(os.path.expanduser(given)))
        for r in self.roots:
            if given in (r.name, r.path, r.label) or real == r.real:
                return [r]
        raise PutError(
            f"{where}: {printable(given)} is not one of the roots ({self.labels()}); pass it"
            " with --root"
        )

    def anchor(self, a, roots: Sequence[Root], where: str) -> Anchor:
        """The anchor ``a`` (``put.AnchorText``) names in ``roots``; raises ``PutError``."""
        if a.path:
            root, rel, kind = self._path(a.path, roots, where)
            if a.symbol:
                d = self._declared_in(root, rel, a.symbol, where)
                return self._use(root, Anchor("symbol", root.name, rel, a.symbol, d.lines))
            return self._use(root, Anchor(kind, root.name, rel))
        root, d = self._declared(a.symbol, roots, where)
        return self._use(root, Anchor("symbol", root.name, printable(d.path), a.symbol, d.lines))

    def _use(self, root: Root, anchor: Anchor) -> Anchor:
        self._used.setdefault(root.name, root)
        return anchor

    # --- paths

    def _path(self, text: str, roots: Sequence[Root], where: str) -> tuple[Root, str, str]:
        """``(root, path relative to it, "file" | "folder")`` of the first of ``roots``
        holding ``text``. Raises ``PutError`` when it lies outside every root or none
        holds it."""
        from brainmigrate.put import PutError

        given = text.strip().replace("\\", "/")
        if given.startswith("~"):
            given = os.path.expanduser(given)  # as a cited ~/x reads (docs/reference.md "Anchors")
        shown = printable(given)
        inside = escaped = False
        for root in roots:
            rel = _inside(root, given)
            if rel is None:
                continue
            inside = True
            if rel in ("", "."):
                raise PutError(
                    f"{where}: {shown} is the root {root.label} itself; anchor a file or a"
                    " folder inside it"
                )
            if printable(rel) != rel:
                raise PutError(
                    f"{where}: {shown}: a file name that is not UTF-8 text cannot be stored;"
                    " anchor its folder or rename it"
                )
            real = os.path.realpath(os.path.join(root.real, rel))
            if root.relative(real) is None and real != root.real:
                escaped = True  # a symlink that leads out of the root
                continue
            if ".git" in rel.split("/"):
                raise PutError(f"{where}: {shown} is inside git's own folder; anchor code")
            if os.path.isfile(real):
                return root, printable(rel), "file"
            if os.path.isdir(real):
                return root, printable(rel), "folder"
        if escaped:
            raise PutError(
                f"{where}: {shown} leads out of the root (a symbolic link); anchor a path"
                " inside a checkout"
            )
        if not inside:
            raise PutError(
                f"{where}: {shown} is outside every root ({self.labels(roots)}); anchor a"
                " path inside a checkout"
            )
        raise PutError(
            f"{where}: {shown}: no root holds it (looked in {self.labels(roots)}); give a"
            " path that exists"
        )

    # --- declarations

    def _index(self, root: Root):
        index = self._indexes.get(root.path)
        if index is None:
            from brainmigrate.codeindex import CodeIndex

            cache = Path(self.cache_dir) if self.cache_dir else None
            index = self._indexes[root.path] = CodeIndex(root.path, cache_dir=cache)
        return index

    def _declared_in(self, root: Root, rel: str, symbol: str, where: str):
        """The declaration ``symbol`` names in file ``rel`` (types first, then functions,
        then any other kind; the first in the file). Raises ``PutError``."""
        from brainmigrate.moves import in_container, split_symbol
        from brainmigrate.put import PutError

        state = self._index(root).read_files([rel]).get(rel)
        if state is None:
            raise PutError(
                f"{where}: {printable(rel)} is no source file the declaration index reads;"
                f" anchor the file ({printable(rel)}) alone"
            )
        container, name = split_symbol(symbol)
        same = [d for d in state.declarations if d.name == name and in_container(d, container)]
        if not same:
            raise PutError(f"{where}: {printable(rel)} declares no {printable(symbol)}")
        return _chosen(same)[0]

    def _declared(self, symbol: str | None, roots: Sequence[Root], where: str):
        """``(root, declaration)`` of ``symbol`` in the first of ``roots`` that declares it,
        in one file only. Raises ``PutError`` when none does or it is in several files."""
        from brainmigrate.moves import in_container, split_symbol
        from brainmigrate.put import PutError

        container, name = split_symbol(symbol or "")
        if not name:
            raise PutError(f"{where}: give a path, a symbol or both")
        for root in roots:
            index = self._index(root)
            found = index.declarations_of([name]).get(name, [])
            found = _chosen([d for d in found if in_container(d, container)])
            # a file and a symbolic link to it are one file (docs/reference.md "Anchors")
            found = [d for d in found if index.link_target(d.path) is None] or found
            paths = sorted({d.path for d in found})
            if len(paths) > 1:
                listed = ", ".join(printable(p) for p in paths[:4])
                raise PutError(
                    f"{where}: {printable(symbol)} is declared in {len(paths)} files of"
                    f" {root.label} ({listed}{', …' if len(paths) > 4 else ''}); anchor"
                    f" path#{printable(symbol)}"
                )
            if paths:
                return root, found[0]
        raise PutError(
            f"{where}: {printable(symbol)} is declared in no root ({self.labels(roots)});"
            f" give its file too (path#{printable(symbol)})"
        )

    # --- what the text cites

    def _cited(self, checked: Sequence) -> list[tuple[list[Anchor], list[str]]]:
        """The anchors and gone citations each fact's text gives, read by the import's
        resolver in the first root's terms (SPEC.md §Anchors)."""
        from brainmigrate.anchors import NOTHING, Resolver, copy_resolved
        from brainmigrate.importer import _name_index, cache_folder
        from brainmigrate.model import ParsedFact, Segment

        roots = self.roots
        resolver = Resolver(
            roots, lambda: _name_index(roots[0], self.cache_dir), cache_folder(self.cache_dir)
        )
        scanned = []
        for c in checked:
            f = c.fact
            fact = ParsedFact(
                "<put>", 1, f.scope, f.kind or "other", "-", c.text, c.text, c.task, c.tasks, f.run,
                None, "active", (Segment(1, 1, c.text),),
            )  # fmt: skip
            scanned.append(resolver.scan(fact, [], None))
        resolver.finish()
        out = []
        for res in scanned:
            if res is NOTHING:
                out.append(([], []))
                continue
            done = resolver.complete(copy_resolved(res))
            for a in done.anchors:
                self._used.setdefault(a.root, next(r for r in roots if r.name == a.root))
            gone = [c.name for c in done.citations if c.state == "gone"]
            out.append((list(done.anchors), list(dict.fromkeys(gone))))
        return out

    # --- fingerprints

    def fingerprint(self, records: Sequence[FactRecord]) -> None:
        """``put --verify``: fingerprint ``records``' anchors now, as ``import --verify``
        does (``fingerprints.fingerprint_records``), in the put's roots."""
        from brainmigrate.fingerprints import Checkouts, fingerprint_records

        folders = {r.name: r.path for r in self.roots}
        checkouts = Checkouts((), self.cache_dir, base=self.base, folders=folders)
        fingerprint_records(records, checkouts)


def _inside(root: Root, given: str) -> str | None:
    """``given`` relative to ``root`` (``""`` for the root itself), or None when it lies
    outside it."""
    if os.path.isabs(given):
        for path in (os.path.normpath(given), os.path.realpath(given)):
            rel = root.relative(path)
            if rel is not None:
                return rel
        return None
    return normalize(given)


def _chosen(decls: list) -> list:
    """The declarations a symbol anchors to: types, else functions, else any other kind
    (SPEC.md §Anchors: types before functions), in file order."""
    types = [d for d in decls if d.category == "type"]
    functions = [d for d in decls if d.category == "function"]
    chosen = types or functions or decls
    return sorted(chosen, key=lambda d: (d.path, tuple(d.lines)))


def _scope_anchor(scope: str):
    """The anchor a ``file:`` or ``symbol:`` scope names (the seed: such a scope anchors
    itself), as ``put.AnchorText``; None for any other scope."""
    from brainmigrate.put import AnchorText

    kind, _, rest = scope.partition(":")
    if kind == "file":
        return AnchorText(path=rest.strip())
    if kind == "symbol":
        return AnchorText.from_text(rest)
    return None
