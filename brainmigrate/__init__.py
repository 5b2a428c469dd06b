"""brainmigrate: brain-notation notes in, a fact store tools can trust out.

Stages, one module or package each: ``read`` (lines, facts) -> ``anchors`` -> ``merge`` ->
``stores`` / ``reports``; ``importer`` runs them in order and ``cli`` is the thin shell.
"""

__version__ = "0.1.0"
