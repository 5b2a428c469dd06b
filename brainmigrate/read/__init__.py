"""The read stage: notes files read into lines (brain notation or Markdown notes), the
tokens a fact's text cites, and lines grouped into facts (SPEC.md §Notation)."""
