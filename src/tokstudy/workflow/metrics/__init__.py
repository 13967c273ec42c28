"""The workflow of the intrinsic-metrics stage: :mod:`.plan` (the planner of the ``metrics:`` and
``plots:`` sections: the scored cells' files, tables, plots and cost table) and :mod:`.steps`
(what the rules of ``workflow/rules/metrics.smk`` run, calling :mod:`tokstudy.metrics`)."""
