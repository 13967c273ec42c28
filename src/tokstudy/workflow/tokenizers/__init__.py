"""The workflow of the tokenizers stage: :mod:`.plan` (the planner of the ``tokenizers:`` and
``vocab_sizes:`` sections: the study's cells) and :mod:`.steps` (what the rules of
``workflow/rules/tokenizers.smk`` run, calling :mod:`tokstudy.tokenizers`)."""
