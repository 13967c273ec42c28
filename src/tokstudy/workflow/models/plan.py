"""The planner of the ``models:`` section: the shared section (:mod:`.section`), one
planner per kind of task (:mod:`.mlm_plan`, :mod:`.finetune_plan`, :mod:`.clm_plan`) and
the summary of them all."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokstudy.workflow.models.clm_plan import ClmPlanner
from tokstudy.workflow.models.finetune_plan import FinetunePlanner
from tokstudy.workflow.models.mlm_plan import MlmPlanner
from tokstudy.workflow.models.section import ModelsSection
from tokstudy.workflow.study.paths import expand

if TYPE_CHECKING:
    from tokstudy.workflow.study.core import Study
    from tokstudy.workflow.tokenizers.plan import TokenizersPlanner


class ModelsPlanner:
    """The ``models:`` section of a study resolved into rule inputs (empty without it):
    ``section`` (settings, checks, cells, runs), ``mlm``, ``finetune`` and ``clm`` (one
    kind of task each), and the tables that ``summarize_models`` writes of them."""

    RESULTS_TABLE = "tables/models/results.tsv"
    SUMMARY_TABLE = "tables/models/{table}.{ext}"
    NOISE_PLOT = "plots/models/noise.{ext}"

    def __init__(self, study: Study, tokenizers: TokenizersPlanner) -> None:
        self.section = ModelsSection(study, tokenizers)
        self.mlm = MlmPlanner(self.section)
        self.finetune = FinetunePlanner(self.section)
        self.clm = ClmPlanner(self.section)

    def summary_tables(self) -> list[str]:
        """Names of the statistics tables the summary writes."""
        tables = ["seed_summary", "wilcoxon", "flagged_runs"]
        tables += ["bootstrap"] if self.finetune.tasks() else []
        tables += ["clm"] if self.section.has_task("clm") else []
        return tables + (["clm_scales"] if len(self.clm.clm_scales()) > 1 else [])

    def targets(self) -> list[str]:
        """What ``summarize_models`` writes: results, statistics tables and the noise plot
        (nothing without the section)."""
        if self.section.models is None:
            return []
        patterns = [
            self.RESULTS_TABLE,
            *expand(self.SUMMARY_TABLE, table=self.summary_tables(), ext=["tsv", "md"]),
            *expand(self.NOISE_PLOT, ext=["png", "pdf"]),
        ]
        return [self.section.study.out(pattern) for pattern in patterns]
