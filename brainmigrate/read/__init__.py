"""The read stage: the notes files a run reads (``files``), each read into lines (brain
notation or Markdown notes: ``lines``, ``markdown_notes``, by the grammar of ``notation``),
the tokens a fact's text cites, lines grouped into facts, and the run over the files
(``run``) (SPEC.md §Notation)."""
