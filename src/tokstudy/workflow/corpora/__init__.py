"""The workflow of the corpora stage: :mod:`.plan` (the planner of the ``languages:`` and
``corpus_defaults:`` sections) and :mod:`.steps` (what the rules of
``workflow/rules/corpora.smk`` run, calling :mod:`tokstudy.corpora`)."""
