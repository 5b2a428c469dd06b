"""README's "Ten minutes with brainmigrate" is what brainmigrate does: every ```sh command
of the section is run in order, in a copy of ``samples/``, with the venv's ``brainmigrate``
on ``PATH``; each exits with the code the README marks (``# exit N``, else 0) and prints
every output line the README shows under it (``…`` marks a cut: the parts around it appear
in that order in one printed line). The CI snippets (GitHub Actions steps, the pre-commit
configuration) cannot run here: they are parsed, and each command they run must name a
real command and real options of it."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from clirun import cli

from brainmigrate import __version__
from brainmigrate.cli import main

REPO = Path(__file__).resolve().parent.parent
HEADING = "## Ten minutes with brainmigrate\n"


def section() -> str:
    """The walkthrough's text: from its heading to the next level-2 heading or rule."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = text.split(HEADING, 1)[1]
    return re.split(r"\n(?:## |---\n)", body, maxsplit=1)[0]


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)\n```", section(), re.S)


def steps() -> list[tuple[str, int, list[str]]]:
    """(command, expected exit code, expected output lines) of every ``$`` line, in order."""
    found: list[tuple[str, int, list[str]]] = []
    for block in blocks("sh"):
        for line in block.splitlines():
            if line.startswith("$ "):
                command = line[2:]
                code = re.search(r"\s#\s*exit (\d+)\s*$", command)
                found.append((command, int(code.group(1)) if code else 0, []))
            else:
                assert found, f"output before any command: {line!r}"
                found[-1][2].append(line)
    return found


def shown_in(line: str, printed: str) -> bool:
    """Whether one README output line (``…`` marking cuts) is in one line of ``printed``."""
    parts = [part.strip() for part in line.split("…") if part.strip()]
    for out in printed.splitlines():
        at = 0
        for part in parts:
            at = out.find(part, at)
            if at < 0:
                break
            at += len(part)
        else:
            return True
    return False


def test_the_walkthrough_runs_as_written(tmp_path):
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    venv_bin = Path(sys.executable).parent
    assert (venv_bin / "brainmigrate").exists(), "brainmigrate is not installed in the venv"
    env = dict(os.environ)
    env["PATH"] = f"{venv_bin}{os.pathsep}{env.get('PATH', '')}"
    env.update(CI="1", NO_COLOR="1", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    for who in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{who}_NAME"] = "walker"
        env[f"GIT_{who}_EMAIL"] = "walker@example.org"
    ran = steps()
    assert len(ran) >= 12 and sum(bool(out) for _, _, out in ran) >= 10
    for command, code, expected in ran:
        done = subprocess.run(
            command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        printed = done.stdout + done.stderr
        assert done.returncode == code, f"{command}\nexit {done.returncode}\n{printed}"
        for line in expected:
            assert shown_in(line, printed), f"{command}\nwants: {line}\nprinted:\n{printed}"


def test_the_suppression_shown_waives_that_facts_findings(tmp_path):
    """The ```markdown line is a samples/ notes line with a trailing comment; written in
    place of it, ``check`` marks that fact's two findings ``[suppressed]``."""
    (line,) = blocks("markdown")
    fact, comment = line.split(" <!-- ", 1)
    assert comment.startswith("brainmigrate: ignore ")
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    (page,) = [p for p in (tmp_path / "samples/notes").glob("*.md") if fact in p.read_text()]
    page.write_text(page.read_text().replace(fact + "\n", line + "\n"))
    roots = ["--root", tmp_path / "samples/roots/app", "--root", tmp_path / "samples/roots/infra"]
    done = cli("check", tmp_path / "samples/notes", *roots, "--isolated")
    assert done.exit_code == 1
    mine = [out for out in done.stdout.splitlines() if out.startswith(str(page))]
    assert len(mine) == 2 and all(out.endswith("[suppressed]") for out in mine)
    assert "2 failing at --fail-on error; 2 suppressed;" in done.stdout


def test_the_cut_mark_keeps_order():
    assert shown_in("k11 … ledger: …", "k11 environment in the ledger: src/x")
    assert not shown_in("ledger … k11", "k11 environment in the ledger")
    assert not shown_in("k11 … ledger", "k11 environment\nin the ledger")


def option_names(name: str) -> set[str]:
    return {opt for param in main.commands[name].params for opt in param.opts}


def assert_real_command(argv: list[str]) -> None:
    """``argv`` is ``brainmigrate COMMAND ...`` whose every ``-x``/``--x`` is an option of
    COMMAND."""
    assert argv[0] == "brainmigrate" and argv[1] in main.commands, argv
    known = option_names(argv[1])
    for word in argv[2:]:
        if word.startswith("-") and word != "-":
            assert word.split("=", 1)[0] in known, f"{argv[1]} has no option {word}"


def test_the_actions_steps_run_real_options():
    workflow, _ = (yaml.safe_load(b) for b in blocks("yaml"))
    runs = [shlex.split(step["run"]) for step in workflow if "run" in step]
    checks = [argv for argv in runs if argv[0] == "brainmigrate"]
    assert len(checks) == 1
    assert_real_command(checks[0])
    assert "--format" in checks[0] and "github" in checks[0]
    major = __version__.split(".")[0]
    assert [argv[-1] for argv in runs if argv[:2] == ["pip", "install"]] == [
        f"git+https://github.com/OWNER/brainmigrate@v{major}"
    ]


def test_the_pre_commit_hooks_exist_and_take_their_args():
    _, config = (yaml.safe_load(b) for b in blocks("yaml"))
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    (repo,) = config["repos"]
    assert re.fullmatch(r"v\d+\.\d+\.\d+", repo["rev"])
    assert repo["rev"].split(".")[0] == "v" + __version__.split(".")[0]
    assert repo["hooks"]
    for hook in repo["hooks"]:
        assert hook["id"] in hooks, f"no hook {hook['id']} in .pre-commit-hooks.yaml"
        entry = shlex.split(hooks[hook["id"]]["entry"])
        assert_real_command(entry + [str(a) for a in hook.get("args", [])])
