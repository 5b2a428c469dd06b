"""Record classes carry ``__init__``, ``__repr__``, ``__eq__`` and ``__hash__`` as source
(``dataclass()`` compiles them on every start-up, issue 14), written by
``tools/records.py`` from their fields (issue 23): the blocks are fresh, and the methods
behave as the ones ``dataclass()`` makes from the same fields: signature and defaults,
repr, equality (with ``compare=False`` fields left out), hash, frozen-ness, pickling and
copying."""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import inspect
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from brainmigrate import (
    anchors,
    check,
    config,
    hints,
    knowledge,
    model,
    roots,
    rules,
)
from brainmigrate.codeindex import listing
from brainmigrate.codeindex import model as index_model
from brainmigrate.read import lines, tokens
from brainmigrate.read import run as read_run
from brainmigrate.read.run import ImportOptions

WRITTEN_OUT = [
    model.Diagnostic,
    model.Segment,
    model.Anchor,
    model.Citation,
    model.ParsedFact,
    model.FactRecord,
    rules.Rule,
    rules.Selection,
    rules.Hint,
    rules.Finding,
    check.CheckedFact,
    check.CheckResult,
    config.Settings,
    lines.Line,
    tokens.Token,
    roots.Root,
    knowledge.History,
    anchors.Resolved,
    hints.Move,
    ImportOptions,
    read_run.FileStats,
    read_run.Notes,
    index_model.Declaration,
    index_model.FileState,
    index_model.SkippedFile,
    index_model.LanguageCount,
    index_model.IndexSummary,
    listing.ListedFile,
    listing._Rule,
]

#: Values a field takes in the instances compared (two each, so every field is varied
#: once); a field not named here gets strings made of its name.
VALUES = {
    (rules.Selection, "select"): (None, ("BM1",)),
    (rules.Selection, "extend_select"): ((), ("BM2",)),
    (rules.Selection, "ignore"): ((), ("BM101",)),
}


def reference(cls):
    """What ``dataclass()`` makes of ``cls``'s fields with its own options."""
    params = cls.__dataclass_params__
    specs = []
    for f in dataclasses.fields(cls):
        kwargs = {
            "init": f.init,
            "repr": f.repr,
            "hash": f.hash,
            "compare": f.compare,
            "kw_only": f.kw_only,
        }
        if f.default is not dataclasses.MISSING:
            kwargs["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            kwargs["default_factory"] = f.default_factory
        specs.append((f.name, f.type, dataclasses.field(**kwargs)))
    namespace = {"__post_init__": cls.__post_init__} if hasattr(cls, "__post_init__") else {}
    return dataclasses.make_dataclass(
        cls.__name__,
        specs,
        namespace=namespace,
        frozen=params.frozen,
        slots="__slots__" in vars(cls),
    )


def values(cls, name: str) -> tuple:
    return VALUES.get((cls, name), (f"{name}-1", f"{name}-2"))


def build(target, cls, changed: str | None = None):
    kwargs = {}
    for f in dataclasses.fields(cls):
        first, second = values(cls, f.name)
        kwargs[f.name] = second if f.name == changed else first
    positional = [kwargs.pop(f.name) for f in dataclasses.fields(cls) if not f.kw_only]
    return target(*positional, **kwargs)


@pytest.mark.parametrize("cls", WRITTEN_OUT, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_written_out_methods_behave_as_dataclass_makes_them(cls):
    behaves_as_dataclass_makes_it(cls)


def behaves_as_dataclass_makes_it(cls):
    ref = reference(cls)
    assert cls.__doc__ and "__doc__" in vars(cls)  # its own, not one made from __init__
    # the same signature, with the very default objects of the fields
    ours = inspect.signature(cls.__init__).parameters
    theirs = inspect.signature(ref.__init__).parameters
    assert [(p.name, p.kind) for p in ours.values()] == [(p.name, p.kind) for p in theirs.values()]
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            assert ours[f.name].default is f.default
    assert cls.__match_args__ == ref.__match_args__
    assert cls.__dataclass_params__.frozen == ref.__dataclass_params__.frozen
    assert ("__slots__" in vars(cls)) == ("__slots__" in vars(ref))
    if "__slots__" in vars(cls):
        assert cls.__slots__ == ref.__slots__
    assert (cls.__hash__ is None) == (ref.__hash__ is None)

    a, r = build(cls, cls), build(ref, cls)
    assert repr(a) == repr(r)
    assert a == build(cls, cls)
    assert (a != build(cls, cls)) is False
    assert a.__eq__(object()) is NotImplemented and r.__eq__(object()) is NotImplemented
    if cls.__hash__ is not None:
        assert hash(a) == hash(r)
    for f in dataclasses.fields(cls):
        a2, r2 = build(cls, cls, f.name), build(ref, cls, f.name)
        assert repr(a2) == repr(r2)
        assert (a == a2) == (r == r2), f.name
        assert (a != a2) == (r != r2), f.name
        if cls.__hash__ is not None:
            assert hash(a2) == hash(r2)
            assert (hash(a) == hash(a2)) == (hash(r) == hash(r2)), f.name

    # defaults left out: the same values
    required = {
        f.name: values(cls, f.name)[0]
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    assert repr(cls(**required)) == repr(ref(**required))
    for f in dataclasses.fields(cls):  # a factory's value is made afresh for each
        if f.default_factory is not dataclasses.MISSING:
            one, two = cls(**required), cls(**required)
            assert getattr(one, f.name) == f.default_factory()
            assert getattr(one, f.name) is not getattr(two, f.name)

    # frozen or not, as dataclass() makes it
    name = dataclasses.fields(cls)[0].name
    if cls.__dataclass_params__.frozen:
        for obj in (a, r):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(obj, name, "x")
            with pytest.raises(dataclasses.FrozenInstanceError):
                delattr(obj, name)
    else:
        b, s = build(cls, cls), build(ref, cls)
        setattr(b, name, b)  # a value holding itself: the repr stops at "..."
        setattr(s, name, s)
        assert repr(b) == repr(s)
        assert "..." in repr(b)

    # pickling and copying give an equal value, through replace() too
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        try:
            data = pickle.dumps(a, protocol)
        except TypeError as exc:  # slotted, not frozen: protocols 0 and 1 refuse it
            with pytest.raises(TypeError, match="__getstate__"):
                pickle.dumps(r, protocol)
            assert "__getstate__" in str(exc)
            continue
        back = pickle.loads(data)
        assert type(back) is cls and back == a and repr(back) == repr(a)
    assert copy.copy(a) == a and copy.deepcopy(a) == a
    changed = dataclasses.replace(a, **{name: values(cls, name)[1]})
    assert repr(changed) == repr(build(cls, cls, name))
    assert dataclasses.asdict(a) == dataclasses.asdict(r)


REPO = Path(__file__).resolve().parent.parent
TOOL = REPO / "tools" / "records.py"

#: Record classes as a move between modules may leave them: methods written by hand, a
#: plain ``@dataclass``, a class without any; every option the generator reads.
SAMPLE = '''
from __future__ import annotations

from dataclasses import dataclass, field
from reprlib import recursive_repr

from brainmigrate.model import FROM_FACTORY

LIMIT = (1, 2)


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Frozen:
    """Frozen and slotted, its methods written by hand (and wrong)."""

    name: str
    limit: tuple = LIMIT
    seen: list = field(default_factory=list, compare=False)
    hidden: str = field(default="h", repr=False)

    # written by hand, to be replaced
    def __init__(self, name, limit=LIMIT, seen=FROM_FACTORY, hidden="h") -> None:
        object.__setattr__(self, "name", name)

    @recursive_repr()
    def __repr__(self) -> str:
        return "Frozen"

    def label(self) -> str:
        """Kept as it is."""
        return self.name


@dataclass(kw_only=True, init=False, repr=False, eq=False)
class Options:
    """Mutable, keyword-only, with a factory and a check after ``__init__``."""

    roots: tuple = ()
    names: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.roots is None:
            raise ValueError("roots")


@dataclass
class Plain:
    """A plain ``@dataclass`` whose ``__init__`` is written by hand."""

    path: str
    count: int = 0

    def __init__(self, path, count=0) -> None:
        self.path = path
        self.count = count
'''


def records(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, cwd=REPO
    )


def test_the_generated_blocks_are_fresh():
    done = records("--check", "brainmigrate")
    assert done.returncode == 0, done.stderr


def load(path: Path, monkeypatch):
    name = f"records_sample_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # dataclass() and pickle look it up
    spec.loader.exec_module(module)
    return module


def test_the_generator_replaces_written_methods_and_is_idempotent(tmp_path, monkeypatch):
    sample = tmp_path / "sample.py"
    sample.write_text(SAMPLE.lstrip())
    done = records("--check", str(sample))
    assert done.returncode == 1
    assert all(
        f"sample.py: stale or missing generated methods: {n}" in done.stderr
        for n in ("Frozen", "Options", "Plain")
    )
    assert records("--write", str(sample)).returncode == 0
    text = sample.read_text()
    assert records("--check", str(sample)).returncode == 0
    assert records("--write", str(sample)).returncode == 0 and sample.read_text() == text
    assert "written by hand, to be replaced" not in text and "Kept as it is." in text
    assert "@dataclass(init=False, repr=False, eq=False)\nclass Plain:" in text
    assert text.count("# --- end generated ---") == 3 and text.count("def __init__") == 3
    module = load(sample, monkeypatch)
    for cls in (module.Frozen, module.Options, module.Plain):
        behaves_as_dataclass_makes_it(cls)
    assert module.Frozen("a").label() == "a"
    with pytest.raises(ValueError):
        module.Options(roots=None)


def test_a_field_added_makes_the_block_stale(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(SAMPLE.lstrip())
    assert records("--write", str(sample)).returncode == 0
    text = sample.read_text().replace(
        "    count: int = 0\n", "    count: int = 0\n    x: int = 1\n"
    )
    sample.write_text(text)
    done = records("--check", str(sample))
    assert done.returncode == 1
    assert "Plain" in done.stderr and "Frozen" not in done.stderr


def test_options_the_generator_does_not_write_stop_it(tmp_path):
    sample = tmp_path / "sample.py"
    text = SAMPLE.lstrip().replace("kw_only=True, init=False", "order=True, init=False")
    sample.write_text(text)
    done = records("--write", str(sample))
    assert done.returncode == 2 and "Options: @dataclass(order=...) is not written" in done.stderr
    assert sample.read_text() == text  # nothing written
