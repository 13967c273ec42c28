"""The workflow of the analyses: one sub-package per analysis of :data:`.registry.ANALYSES`,
each with its planner (``plan.py``: settings, checks, path patterns, targets); the rules of
``workflow/rules/analyses/<name>.smk`` name the analysis' functions in :mod:`tokstudy.analyses`
(:mod:`tokstudy.workflow.binder` calls them). :mod:`.plan` composes their planners
for the study's plan; :mod:`.base` is what every analysis planner has.
"""
