"""The workflow of the pretrained tokenizers: :mod:`.steps` (what the rules of
``workflow/rules/pretrained.smk`` run, calling :mod:`tokstudy.tokenizers.pretrained`)."""
