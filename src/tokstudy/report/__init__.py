"""Comparison tables and plots assembled from the per-job metric files, and the study page.

The report stage: :mod:`.plan` (the planner of the study page), :mod:`.steps` (what the
rules of ``workflow/rules/report.smk`` run), :mod:`.tables`, :mod:`.plots`, :mod:`.cost`
and :mod:`.page`.
"""
