"""The study: a validated config resolved once, and the plan of its sections.

``Study`` (:mod:`tokstudy.study.core`) fills in the defaults (:mod:`.defaults`) and
answers the settings every section shares; ``StudyPlan`` (:mod:`.planners`) composes the
stages' planners over it, each in its stage's package: corpora
(:mod:`tokstudy.corpora.plan`), tokenizers (:mod:`tokstudy.tokenizers.plan`: the cells of
the study), metrics (:mod:`tokstudy.metrics.plan`), analyses (:mod:`tokstudy.analyses.plan`),
models (:mod:`tokstudy.models.plan`), NMT (:mod:`tokstudy.nmt.plan`) and the study page
(:mod:`tokstudy.report.plan`), each owning its checks (helpers in :mod:`.checks`), path
patterns (filled in by ``Study.out``, :mod:`.paths`) and ``targets()``; :mod:`.resources`
is the one table of the rules' threads, memory and run time.
"""
