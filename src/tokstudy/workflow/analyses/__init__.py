"""The workflow of the analyses: one sub-package per analysis of :data:`.registry.ANALYSES`,
each with its planner (``plan.py``: settings, checks, path patterns, targets) and its steps
(``steps.py``: what the rules of ``workflow/rules/analyses/<name>.smk`` run, calling the
analysis' computation in :mod:`tokstudy.analyses`). :mod:`.plan` composes their planners
for the study's plan; :mod:`.base` is what every analysis planner has.
"""
