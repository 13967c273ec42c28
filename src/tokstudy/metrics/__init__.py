"""Intrinsic metrics: :mod:`.compute` (the metrics, from one streaming pass). The stage's
planner and steps are :mod:`tokstudy.workflow.metrics`'s."""
