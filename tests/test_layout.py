"""The package's layout: the stage order the README's "Layout" section lists, read from the
imports themselves (``ast``, imports inside functions included), and one error root."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import brainmigrate
from brainmigrate.errors import BrainmigrateError

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "brainmigrate"

#: Imports against the stage order that stay for now, each with why. The key is
#: (importing module, imported module), names relative to ``brainmigrate``.
KNOWN_UPWARD: set[tuple[str, str]] = set()

#: Modules whose job is a command: nothing below the CLI imports them to shape a fact.
COMMAND_MODULES = ("search", "reports")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str) -> set[str]:
    """The package modules ``name`` imports anywhere in its file, relative to the package
    (``from brainmigrate import check`` -> ``check``; ``from .common import X`` inside
    ``exports`` -> ``exports.common``)."""
    path = MODULES[name]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
            found.update(t for t in targets if t == "brainmigrate" or t.startswith("brainmigrate."))
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - node.level + 1]
            full = ".".join(["brainmigrate", *base, *([node.module] if node.module else [])])
        else:
            full = node.module or ""
        if full != "brainmigrate" and not full.startswith("brainmigrate."):
            continue
        found.add(full)
        for alias in node.names:  # ``from brainmigrate import check`` imports a module
            sub = f"{full}.{alias.name}".removeprefix("brainmigrate.")
            if sub in MODULES:
                found.add(f"brainmigrate.{sub}")
    out = {f.removeprefix("brainmigrate").lstrip(".") for f in found}
    return {m for m in out if m != name}


def layout() -> list[list[str]]:
    """The stages the README's "Layout" section lists, lowest first: the backquoted names
    before `` -- `` on each numbered item (``codeindex/`` names a package)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    stages = []
    for line in section.splitlines():
        m = re.match(r"\d+\. (.*?) -- ", line)
        if m:
            stages.append([n.rstrip("/") for n in re.findall(r"`([^`]+)`", m.group(1))])
    return stages


def stage_of(module: str, stages: list[list[str]]) -> int:
    """The stage of ``module``: its own entry, else its package's (``exports.brain`` is in
    ``exports``); the package root (``brainmigrate``: ``__version__``) is below them all."""
    if module == "":
        return -1
    top = module.split(".")[0]
    for i, names in enumerate(stages):
        if module in names or top in names:
            return i
    raise AssertionError(f"{module} is in no stage of the README's Layout section")


def test_the_readme_layout_names_every_module_and_package_once():
    listed = [n for stage in layout() for n in stage]
    assert len(listed) == len(set(listed)), "a module is listed twice"
    on_disk = {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    on_disk |= {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert sorted(listed) == sorted(on_disk)
    for name in listed:  # a package is shown with a "/", a module without
        folder = (PACKAGE / name).is_dir()
        assert f"`{name}/`" in (REPO / "README.md").read_text(encoding="utf-8") or not folder


def test_no_module_imports_a_higher_stage():
    stages = layout()
    upward = set()
    for name in MODULES:
        mine = stage_of(name, stages)
        for other in imports(name):
            if stage_of(other, stages) > mine:
                upward.add((name, other.split(".")[0]))
    assert upward == KNOWN_UPWARD


def test_the_known_upward_imports_are_still_there():
    """An exception that no longer happens is taken off the list."""
    for name, other in KNOWN_UPWARD:
        assert any(i == other or i.startswith(other + ".") for i in imports(name)), (name, other)


def test_nothing_below_the_cli_imports_a_command_module_to_shape_a_fact():
    """Facts are shaped in ``shapes``, below search, reports and exports."""
    reaching = {
        (name, other.split(".")[0])
        for name in MODULES
        if name.startswith(("exports", "stores")) or name in ("importer", "stale")
        for other in imports(name)
        if other.split(".")[0] in COMMAND_MODULES
    }
    assert reaching == set()


def test_the_stage_test_sees_imports_inside_functions():
    # the cli's commands import almost everything inside their functions (a fast --help)
    inside = imports("cli.check") | imports("cli.queries") | imports("cli.staleness")
    assert {"check", "exports", "stale"} <= inside
    assert "fingerprints" in imports("importer")  # inside import --verify's function


def error_classes() -> list[type]:
    import importlib

    found = []
    for name in MODULES:
        if name == "__main__":  # runs the CLI when imported
            continue
        module = importlib.import_module(f"brainmigrate.{name}" if name else "brainmigrate")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if obj.__module__ == module.__name__ and issubclass(obj, BaseException):
                found.append(obj)
    return found


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_error_of_the_package_derives_from_the_one_root(cls):
    assert issubclass(cls, BrainmigrateError)
    assert (cls.__doc__ or "").strip(), "an error class says what it means in its docstring"


def test_the_package_root_is_below_every_stage():
    assert brainmigrate.__version__
    assert stage_of("", layout()) == -1


# ------------------------------------------------------------------------------ sizes
#
# Issue 23's limits: a module at most about 550 lines, a function at most 80, a click
# command's function at most 40 (parse, one library call, render), from its ``def`` line
# (its option decorators not counted). Lines inside a block a generator writes (``# ---
# generated by tools/records.py`` to ``# --- end generated ---``, both included) are not
# counted.

MODULE_LINES, FUNCTION_LINES, COMMAND_LINES = 550, 80, 40
GENERATED_FROM = "# --- generated by tools/records.py"
GENERATED_TO = "# --- end generated ---"


def generated_lines(text: str) -> set[int]:
    """The line numbers (1-based) inside generated blocks, their marker lines included."""
    inside, lines = False, set()
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(GENERATED_FROM):
            inside = True
        if inside:
            lines.add(number)
        if stripped.startswith(GENERATED_TO):
            inside = False
    return lines


def is_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a decorator makes the function a click command (``@main.command(...)``,
    ``@click.command()``, ``@group.command``)."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "command":
            return True
    return False


def functions(tree: ast.AST, prefix: str = ""):
    """``(qualified name, node)`` of every function and method, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                yield name, node
            yield from functions(node, f"{name}.")
        else:
            yield from functions(node, prefix)


def oversize() -> dict[str, int]:
    """Each module and function of the package over its limit, with its size (lines, the
    generated ones not counted)."""
    found = {}
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        generated = generated_lines(text)
        size = len(text.splitlines()) - len(generated)
        if size > MODULE_LINES:
            found[name] = size
        for qualname, node in functions(ast.parse(text)):
            lines = set(range(node.lineno, node.end_lineno + 1)) - generated
            if len(lines) > (COMMAND_LINES if is_command(node) else FUNCTION_LINES):
                found[f"{name}:{qualname}"] = len(lines)
    return found


def test_no_module_or_function_is_over_its_limit():
    """Each over-limit module (``stores.queries``) or function (``stores.queries:Reader.match``)
    with its size in lines."""
    assert oversize() == {}


def test_the_size_test_sees_commands_methods_and_generated_blocks():
    tree = ast.parse(
        "@main.command('x')\ndef x_cmd():\n    pass\n\n"
        "class A:\n    def f(self):\n        def g():\n            pass\n"
    )
    found = dict(functions(tree))
    assert list(found) == ["x_cmd", "A.f", "A.f.g"]
    assert is_command(found["x_cmd"]) and not is_command(found["A.f"])
    text = f"a\n    {GENERATED_FROM} (Fact)\nb\n    {GENERATED_TO}\nc\n"
    assert generated_lines(text) == {2, 3, 4}
