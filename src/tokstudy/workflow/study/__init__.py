"""The study: a validated config resolved once.

``Study`` (:mod:`tokstudy.workflow.study.core`) fills in the defaults (:mod:`.defaults`) and
answers the settings every section shares: path patterns (filled in by ``Study.out``,
:mod:`.paths`), cross-key checks the planners share (:mod:`.checks`) and :mod:`.resources`,
the one table of the rules' threads, memory and run time. ``StudyPlan``
(:mod:`tokstudy.workflow.plan`) composes the stages' planners over it.
"""
