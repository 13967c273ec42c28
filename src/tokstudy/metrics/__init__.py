"""The intrinsic-metrics stage: :mod:`.plan` (the planner of the ``metrics:`` and
``plots:`` sections: the scored cells' files, tables, plots and cost table), :mod:`.steps`
(what the rules of ``workflow/rules/metrics.smk`` run) and :mod:`.compute` (the metrics,
from one streaming pass)."""
