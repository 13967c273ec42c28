"""Analyses over trained tokenizers: pure functions returning ``pandas`` DataFrames.

- :mod:`.segmentation`: side-by-side segmentations of a word list;
- :mod:`.morphology`: token boundaries at UD stem/inflection boundaries
  (:mod:`.spans` maps tokens onto a word's characters, :mod:`.ud` finds treebanks);
- :mod:`.multilingual`: temperature-sampled mixed corpora, per-language vocabulary share
  and fertility;
- :mod:`.parity`: tokenization parity on line-aligned parallel text, and premiums and
  their fairness on a multi-parallel corpus (PUD, read by :mod:`.ud`).

:mod:`.tables` runs them on files: it loads tokenizers and text and writes the CSV and
Markdown tables (what :mod:`tokstudy.steps.analysis` calls); :mod:`.correlation` sets
intrinsic metrics against downstream scores.
"""
