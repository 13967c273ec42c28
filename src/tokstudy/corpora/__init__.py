"""The corpora stage: :mod:`.plan` (the planner of the ``languages:`` and
``corpus_defaults:`` sections), :mod:`.steps` (what the rules of
``workflow/rules/corpora.smk`` run) and :mod:`.prepare` (download, clean and split a
corpus)."""
