"""The workflow of the NMT stage: :mod:`.plan` (the planner of the ``nmt:`` section) and
:mod:`.steps` (what the rules of ``workflow/rules/nmt.smk`` run, calling :mod:`tokstudy.nmt`)."""
