"""The study: a validated config resolved once, and the plan of its sections.

``Study`` (:mod:`tokstudy.study.core`) fills in the defaults (:mod:`.defaults`) and
answers the settings every section shares; ``StudyPlan`` (:mod:`.planners`) composes the
corpora (:mod:`.corpora`), tokenizers (:mod:`.tokenizers`: the cells of the study),
metrics (:mod:`.metrics`), analyses (:mod:`.analyses`), models (:mod:`.models`) and NMT
(:mod:`.nmt`) planners over it, each owning its checks, path patterns (filled in by
``Study.out``, :mod:`.paths`) and ``targets()``; :mod:`.resources` is the one table of
the rules' threads, memory and run time.
"""
