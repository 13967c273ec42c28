"""The workflow of the report stage: :mod:`.plan` (the planner of the study page) and :mod:`.steps`
(what the rules of ``workflow/rules/report.smk`` run, calling :mod:`tokstudy.report`)."""
