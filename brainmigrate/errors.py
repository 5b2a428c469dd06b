"""The root of every brainmigrate error, and the exit codes of its commands.

Every error class of the package derives from ``BrainmigrateError``, so the CLI's guard
catches one type and prints its message (which names the fix) as one line. The classes
themselves live beside the code that raises them (``read.files.InputError``,
``stores.StoreError``, ``fsutil.Clash`` …).
"""

from __future__ import annotations


class BrainmigrateError(Exception):
    """A run that cannot be done as asked; the message names the fix."""


#: A run that did what it was asked and found nothing to flag (SPEC.md §Exit codes).
EXIT_OK = 0
#: A run that found what it reports as failing: a finding, a stale fact, a left-out fact.
EXIT_FINDINGS = 1
#: A run that could not be done: bad input, a usage error, an unreadable or unwritable file.
EXIT_FAULT = 2
#: A run stopped by Ctrl-C (SIGINT): 128 + 2, as shells and scripts expect.
EXIT_INTERRUPTED = 130
#: A run stopped by SIGTERM (``kill``, a CI job cancelled): 128 + 15.
EXIT_TERMINATED = 143
#: A run whose reader went away (``| head``): 128 + 13, as a tool killed by SIGPIPE.
EXIT_PIPE = 141
