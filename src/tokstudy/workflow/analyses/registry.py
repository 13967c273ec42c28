"""The one list of analyses: ``ANALYSES``, name → :class:`Analysis`.

Adding an analysis is its computation in the library (``tokstudy/analyses/<name>/``: the
functions its rules name), its planner in the workflow wing
(``tokstudy/workflow/analyses/<name>/plan.py``), one line here, its entry under
``analyses`` in the config schema and one ``include:`` of
``workflow/rules/analyses/<name>.smk`` in the Snakefile. The study's plan
builds the planners in this order, which is also the order of their targets.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokstudy.analyses.correlation.settings import CorrelationSettings
from tokstudy.workflow.analyses.base import AnalysisPlanner
from tokstudy.workflow.analyses.correlation.plan import CorrelationPlanner
from tokstudy.workflow.analyses.morphology.plan import MorphologyPlanner
from tokstudy.workflow.analyses.morphscore.plan import MorphScorePlanner
from tokstudy.workflow.analyses.multilingual.plan import MultilingualPlanner
from tokstudy.workflow.analyses.numbers.plan import NumbersPlanner
from tokstudy.workflow.analyses.parity.plan import ParityPlanner
from tokstudy.workflow.analyses.robustness.plan import RobustnessPlanner
from tokstudy.workflow.analyses.segmentation.plan import SegmentationPlanner
from tokstudy.workflow.analyses.udhr.plan import UdhrPlanner


@dataclass(frozen=True)
class Analysis:
    """One analysis: where its settings sit under ``analyses:`` (config and schema), its
    planner and, where it has one, its typed settings."""

    key: tuple[str, ...]
    planner: type[AnalysisPlanner]
    settings: type | None = None


ANALYSES: dict[str, Analysis] = {
    "segmentation": Analysis(("segmentation",), SegmentationPlanner),
    "morphology": Analysis(("ud_root",), MorphologyPlanner),
    "parity": Analysis(("parity",), ParityPlanner),
    "multilingual": Analysis(("multilingual",), MultilingualPlanner),
    "udhr": Analysis(("parity", "udhr"), UdhrPlanner),
    "morphscore": Analysis(("morphscore",), MorphScorePlanner),
    "numbers": Analysis(("numbers",), NumbersPlanner),
    "robustness": Analysis(("robustness",), RobustnessPlanner),
    "correlation": Analysis(("correlation",), CorrelationPlanner, CorrelationSettings),
}
