"""The ``brainmigrate`` command line run in the test's own process (click's
``CliRunner``): one definition for every test file that runs it."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import CliRunner, Result

from brainmigrate.cli import main


def cli(*args, env: dict | None = None, catch_exceptions: bool = True) -> Result:
    """``brainmigrate ARGS`` run in this process, each argument ``str()``-ed (so paths may
    be given as they are); ``env`` is added to the environment for the run. The result
    holds the exit code and stdout and stderr apart; an exception the command did not
    handle is kept in ``result.exception`` (exit code 1), or raised with
    ``catch_exceptions=False``."""
    return CliRunner().invoke(
        main, [str(a) for a in args], env=env, catch_exceptions=catch_exceptions
    )


def invoker(*prefix: str, catch_exceptions: bool = True) -> Callable[..., Result]:
    """``cli`` with the first arguments ``prefix`` (such as ``"check"``) given: for a test
    file whose every run starts the same way."""

    def run(*args, env: dict | None = None) -> Result:
        return cli(*prefix, *args, env=env, catch_exceptions=catch_exceptions)

    return run
