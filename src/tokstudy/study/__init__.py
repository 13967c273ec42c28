"""The study: a validated config resolved once, with one planner per section.

``Study`` (:mod:`tokstudy.study.core`) fills in the defaults (:mod:`.defaults`) and
answers the languages and their corpora; ``Study.plan`` (:mod:`.planners`) holds the
corpora (:mod:`.corpora`), tokenizers (:mod:`.tokenizers`: the cells of the study),
metrics (:mod:`.metrics`), analyses (:mod:`.analyses`), models (:mod:`.models`) and NMT
(:mod:`.nmt`) planners, each owning its checks, path patterns (filled in by
``Study.out``, :mod:`.paths`) and ``targets()``; :mod:`.resources` is the one table of
the rules' threads, memory and run time.
"""

from tokstudy.cells import PRETRAINED, UNSIZED, Job, ParityTokenizer
from tokstudy.study.core import Study, chatterbot_files

__all__ = [
    "PRETRAINED",
    "UNSIZED",
    "Job",
    "ParityTokenizer",
    "Study",
    "chatterbot_files",
]
