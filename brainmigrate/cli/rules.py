"""``rule CODE``: a finding code's documentation, as ``ruff rule`` prints a rule's (issue
29); ``rule --all`` lists every code. The texts are ``codes.DOCS``, the table SARIF's
``fullDescription`` and ``help`` come from too.
"""

from __future__ import annotations

import click

from brainmigrate.cli.options import voiced
from brainmigrate.cli.runtime import guarded


@click.command("rule")
@click.argument("code", required=False)
@click.option("--all", "every", is_flag=True, help="List every finding code, one a line.")
@voiced
@guarded
def rule_cmd(code: str | None, every: bool) -> None:
    """Print what the finding CODE (BM101) finds, why it matters, an example line and how
    to fix or suppress it. Exit 2 for a code that does not exist."""
    from brainmigrate import rules

    if every and code is not None:
        raise click.UsageError(f"give a code or --all, not both; leave out {code} or --all")
    if not every and code is None:
        raise click.UsageError("give a code (brainmigrate rule BM101) or --all")
    click.echo(rules.all_rules() if every else rules.explain(rules.known_code(code)), nl=False)
