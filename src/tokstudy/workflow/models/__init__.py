"""The workflow of the model stage: :mod:`.plan` (the planner of the ``models:`` section) and
:mod:`.steps` (what the rules of ``workflow/rules/models.smk`` run, calling
:mod:`tokstudy.models`)."""
