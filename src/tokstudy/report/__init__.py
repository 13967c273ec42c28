"""Comparison tables and plots assembled from the per-job metric files, and the study page:
:mod:`.tables`, :mod:`.plots`, :mod:`.cost` and :mod:`.page`. The stage's planner and steps
are :mod:`tokstudy.workflow.report`'s.
"""
