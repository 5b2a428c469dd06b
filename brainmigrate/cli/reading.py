"""How a command that reads notes sets up the read: the configured settings with the
command line's options in place, ``ImportOptions``, standard input as a notes file,
and the progress line."""

from __future__ import annotations

import contextlib
import os
import sys

import click

from brainmigrate.cli.runtime import say, verbose


def load_settings(
    config_file: str | None,
    isolated: bool,
    quiet: bool = False,
    roots_said=True,
    folder: str | None = None,
    **given,
):
    """The settings of the configuration file (``config.load``, found from ``folder``:
    default the current one) with the options given in place; says on stderr which file
    is used when one folder holds two (not when ``quiet``), and under ``--verbose``
    (``options.voiced``) the configuration file and (``roots_said``) the roots. Raises
    ``click.UsageError`` for ``--config`` with ``--isolated``."""
    from brainmigrate import config

    if config_file and isolated:
        raise click.UsageError("--config and --isolated exclude each other; give one")
    settings = config.load(folder, config_file=config_file, isolated=isolated)
    settings = settings.override(**given)
    for note in () if quiet else settings.notes:
        say(f"brainmigrate: note: {note}")  # one line, whatever the file's name
    verbose(f"brainmigrate: configuration: {settings.source or 'none'}")
    if roots_said:
        verbose(f"brainmigrate: roots: {', '.join(settings.roots or ('.',))}")
    return settings


def notes_paths(paths: tuple[str, ...]) -> tuple[str, ...]:
    """The PATHS a run reads: each quoted glob among ``paths`` expanded
    (``files.arguments``); with no PATH at all the current folder, walked for the
    ``include`` globs (``with_include``). Raises ``InputError`` for a glob matching none."""
    from brainmigrate.read import files

    return files.arguments(paths) if paths else (".",)


def with_include(settings):
    """``settings`` of a run given no PATH: its ``include`` globs, default
    ``files.default_include()`` (brain notes folders and the Markdown notes of SPEC.md
    §Notation), name the notes files the current folder gives."""
    from dataclasses import replace

    from brainmigrate.read import files

    return replace(settings, include=settings.include or files.default_include())


def read_options(settings, parser: str, names, progress, notation: str | None = None, skip=()):
    """The ``ImportOptions`` of the configured ``settings`` (``config.Settings`` with
    the command line's options in place), as import and check read notes; ``notation`` is
    ``--notation`` (None: by the settings' ``markdown`` globs); ``skip`` the folders its
    walks leave out (``configs.Group.skip``)."""
    from brainmigrate.read import markdown_notes
    from brainmigrate.read.run import ImportOptions

    settings.check_roots()
    markdown = markdown_notes.DEFAULT_GLOBS if settings.markdown is None else settings.markdown
    return ImportOptions(
        roots=settings.roots,
        scope=settings.scope,
        plus_kind=settings.plus_kind,
        task_pattern=settings.task_pattern,
        parser=parser,
        cache_dir=settings.cache_dir,
        names=names,
        progress=progress,
        notation=notation,
        markdown=markdown,
        files=file_rules(settings, skip),
    )


def file_rules(settings, skip=()):
    """The ``files.FileRules`` of the configured ``settings``: its globs relative to the
    configuration's folder; ``skip`` the absolute folders a walk leaves out."""
    from brainmigrate.read.files import FileRules

    base = os.path.dirname(os.path.abspath(settings.source)) if settings.source else None
    rules = FileRules(settings.include, settings.force_exclude, settings.respect_gitignore, base)
    return rules._replace(skip=tuple(skip))


@contextlib.contextmanager
def stdin_notes(paths: tuple[str, ...], stdin_filename: str | None):
    """``(paths, names)`` with ``-`` in ``paths`` replaced by a temporary file holding
    standard input (copied in 1 MiB chunks), which ``names`` shows as ``stdin_filename``
    (or ``-``); the file is removed afterwards. Raises ``click.UsageError`` for
    ``--stdin-filename`` without ``-``."""
    if "-" not in paths:
        if stdin_filename:
            raise click.UsageError("--stdin-filename names the notes of '-': add - as a PATH")
        yield paths, {}
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="brainmigrate-stdin-") as folder:
        temp = os.path.join(folder, "stdin.md")
        import shutil  # copied in chunks: standard input is never held whole

        with open(temp, "wb") as handle:
            shutil.copyfileobj(sys.stdin.buffer, handle, 1 << 20)
        yield tuple(temp if p == "-" else p for p in paths), {temp: stdin_filename or "-"}


#: What a stage of ``ImportOptions.progress`` shows after reading.
_STAGES = {"merge": "merging", "write": "writing the store:", "check": "checking"}


@contextlib.contextmanager
def notes_progress(no_progress: bool):
    """A ``progress`` callback for ``ImportOptions`` that draws files and lines read,
    then the stage after reading, on stderr; None when no progress is drawn. The line is
    cleared at the end."""
    from brainmigrate import progress

    if not progress.enabled(sys.stderr, not no_progress):
        yield None
        return
    bar = progress.Progress(sys.stderr)

    def report(stage: str, done: int, total: int, lines: int) -> None:
        if stage == "read":
            bar.count("reading notes", done, total, "files", f"{lines:,} lines")
        else:
            bar.show(f"{_STAGES[stage]} {total:,} fact lines ({lines:,} lines read)", force=True)

    try:
        yield report
    finally:
        bar.close()
