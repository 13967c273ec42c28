"""The study: a validated config resolved once, with one planner per section.

``Study`` (:mod:`tokstudy.study.core`) fills in the defaults (:mod:`.defaults`) and
answers the cells of the study; ``Study.plan`` (:mod:`.planners`) holds the corpora,
tokenizers, metrics, analyses, models (:mod:`.models`) and NMT (:mod:`.nmt`) planners,
each owning its checks, paths and ``targets()``; :mod:`.resources` is the one table of
the rules' threads, memory and run time.
"""

from tokstudy.cells import PRETRAINED, UNSIZED, Job, ParityTokenizer
from tokstudy.study.core import (
    DOWNLOAD_DIR,
    PRETRAINED_DOWNLOAD_DIR,
    Study,
    chatterbot_files,
)

__all__ = [
    "DOWNLOAD_DIR",
    "PRETRAINED",
    "PRETRAINED_DOWNLOAD_DIR",
    "UNSIZED",
    "Job",
    "ParityTokenizer",
    "Study",
    "chatterbot_files",
]
