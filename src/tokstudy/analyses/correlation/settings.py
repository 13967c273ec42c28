"""Settings of the correlation analysis, light enough for the study to import
(the analysis itself, :mod:`tokstudy.analyses.correlation.run`, needs pandas and scipy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tokstudy.tokenizers.cells import CORPUS_SPLITS
from tokstudy.training.config import Settings, proportion, setting

NMT_SIDES = ("target", "source")
#: what to do with the scores of a flagged run (:mod:`tokstudy.models.run_flags`)
FLAGGED_RUN_POLICIES = ("exclude", "keep")
#: the other policy: every verdict is also given under it (the sensitivity table)
OTHER_FLAGGED_RUN_POLICY = {"exclude": "keep", "keep": "exclude"}
#: the fewest cells a correlation is computed on
MIN_CELLS = 4
#: the fewest tokenizers of a family the within-family level compares
MIN_FAMILY_TOKENIZERS = 3


@dataclass(frozen=True)
class CorrelationSettings(Settings):
    """Resampling settings of the analysis (``analyses.correlation``)."""

    section: ClassVar[str] = "config key analyses.correlation"

    bootstrap_samples: int = setting(1000, low=1)
    #: at most this many within-size orderings are enumerated (exact test), else as many drawn
    permutations: int = setting(20000, low=1)
    seed: int = 0
    confidence: float = proportion(0.95)
    nmt_side: str = setting("target", choices=NMT_SIDES)
    plot_split: str = setting("heldout", choices=CORPUS_SPLITS)
    #: what the scores of a collapsed, undertrained or lossy run do (models.run_flags)
    flagged_runs: str = setting("exclude", choices=FLAGGED_RUN_POLICIES)
    #: the one intrinsic column declared before the run (``{metric}_{split}``): reported
    #: first, its p Holm-adjusted alone, the other metrics' among themselves ("" = none)
    primary: str = ""
