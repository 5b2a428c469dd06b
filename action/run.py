"""The run step of action.yml: ``brainmigrate check`` with the action's inputs.

The inputs arrive as environment variables (``BM_PATHS``, ``BM_ROOTS``, ``BM_FAIL_ON``,
``BM_BASELINE``, ``BM_SARIF``, ``BM_ARGS``). The action's own reports come first, so the
user's ``args`` can never take stdout from GitHub's annotations: ``--format github --output
-`` is the first pair, then SARIF and the JSON report the step outputs are read from, then
the user's ``args`` (whose ``--format``/``--output`` pairs keep their own order). ``args``
is split with shell rules (quotes, backslashes) and never run by a shell; paths and roots
are split at whitespace. Writes the step outputs ``findings`` and ``exit-code`` to
``$GITHUB_OUTPUT`` and exits with check's exit code. Python only, so it runs the same on
Linux, macOS (bash 3) and Windows runners.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping


def command(env: Mapping[str, str], json_report: str) -> list[str]:
    """The ``brainmigrate check`` arguments for the inputs in ``env``, the JSON report
    going to ``json_report``. Raises ``ValueError`` for ``args`` shell rules cannot split
    (an unclosed quote)."""
    cmd = [sys.executable, "-m", "brainmigrate", "check", *env.get("BM_PATHS", "").split()]
    for root in env.get("BM_ROOTS", "").split():
        cmd += ["--root", root]
    if env.get("BM_FAIL_ON"):
        cmd += ["--fail-on", env["BM_FAIL_ON"]]
    if env.get("BM_BASELINE"):
        cmd += ["--baseline", env["BM_BASELINE"]]
    cmd += ["--format", "github", "--output", "-"]
    if env.get("BM_SARIF"):
        cmd += ["--format", "sarif", "--output", env["BM_SARIF"]]
    cmd += ["--format", "json", "--output", json_report]
    return cmd + shlex.split(env.get("BM_ARGS", ""))


def main() -> int:
    folder = os.environ.get("RUNNER_TEMP") or None
    with tempfile.TemporaryDirectory(prefix="brainmigrate-", dir=folder) as temp:
        report = os.path.join(temp, "check.json")
        try:
            cmd = command(os.environ, report)
        except ValueError as exc:
            print(f"brainmigrate action: error: args: {exc}", file=sys.stderr)
            return 2
        code = subprocess.call(cmd)
        findings = ""
        try:
            with open(report, encoding="utf-8") as handle:
                findings = str(json.load(handle)["totals"]["findings"])
        except (OSError, ValueError, KeyError):
            pass  # the check could not run (exit 2): no report
    outputs = os.environ.get("GITHUB_OUTPUT")
    if outputs:
        with open(outputs, "a", encoding="utf-8") as handle:
            handle.write(f"findings={findings}\nexit-code={code}\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
