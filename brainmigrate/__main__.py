"""``python -m brainmigrate`` and the ``brainmigrate`` script.

``--version`` alone is answered here, before the command line library is imported (it is
most of a short run's start-up); every other command line goes to ``cli.main``.
"""

import sys


def run() -> None:
    """The ``brainmigrate`` command: the same output as ``cli.main`` for every argument."""
    if sys.argv[1:] == ["--version"]:
        from brainmigrate import __version__

        sys.stdout.write(f"brainmigrate, version {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    from brainmigrate.cli import main

    main()


if __name__ == "__main__":
    run()
