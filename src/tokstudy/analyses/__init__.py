"""The analyses of a study, one sub-package each, listed in :data:`.registry.ANALYSES`.

Each sub-package holds its planner (``plan.py``: settings, checks, path patterns,
targets), its steps (``steps.py``: what the rules of
``workflow/rules/analyses/<name>.smk`` run) and its computation: :mod:`.segmentation`,
:mod:`.morphology` (UD lemmas), :mod:`.parity` (line-aligned and PUD), :mod:`.multilingual`,
:mod:`.udhr` (premiums on the UDHR) and :mod:`.correlation` (intrinsic metrics against
downstream scores). :mod:`.plan` composes their planners for the study's plan;
:mod:`.table_files` is the one writer of an analysis table.
"""
