"""The analyses' computations, one sub-package each: :mod:`.segmentation`,
:mod:`.morphology` (UD lemmas), :mod:`.morphscore`, :mod:`.parity` (line-aligned and PUD),
:mod:`.multilingual`, :mod:`.udhr` (premiums on the UDHR), :mod:`.numbers`,
:mod:`.robustness` and :mod:`.correlation` (intrinsic metrics against downstream scores);
:mod:`.table_files` is the one writer of an analysis table. Their planners and steps are the
workflow wing's (:mod:`tokstudy.workflow.analyses`).
"""
