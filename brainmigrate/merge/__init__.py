"""Merging repeats (SPEC.md §Merge): the rule that says which fact a line repeats and how
a repeat updates it (``rule``), the index that finds it (``index``), and the merge run over
the facts read (``run``)."""
