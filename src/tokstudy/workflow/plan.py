"""The plan of a study: one planner per section, each with its checks against the rest
of the study, the settings its rules take, the path patterns of the files it produces
(class attributes, relative to ``results_dir``: :mod:`tokstudy.workflow.study.paths`) and
``targets()``.

:class:`StudyPlan` composes them over one :class:`~tokstudy.workflow.study.core.Study`
(imports run one way: :mod:`tokstudy.workflow.study` ← section planners ← this module); the
``.smk`` files ask it and never read the config or spell a results path themselves.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.cells import Cell, make_cell
from tokstudy.workflow.analyses.plan import AnalysesPlan
from tokstudy.workflow.cell_priority import CellPriorities
from tokstudy.workflow.corpora.plan import CorporaPlanner
from tokstudy.workflow.metrics.plan import MetricsPlanner
from tokstudy.workflow.models.plan import ModelsPlanner
from tokstudy.workflow.nmt.plan import NMTPlanner
from tokstudy.workflow.report.plan import PagePlanner
from tokstudy.workflow.study.core import Study
from tokstudy.workflow.study.resources import rule_resources
from tokstudy.workflow.tokenizers.plan import TokenizersPlanner

#: the rules whose resources depend on the devices their section trains on
GPU_RULES = ("train_clm", "pretrain_mlm", "nmt_train")


def plan_study(config: dict[str, Any]) -> StudyPlan:
    """The plan of a study config (merged, schema-checked): every check the workflow makes
    before its first job, the one function the Snakefile's start and ``tokstudy
    check-config`` both run (a bad value is one :class:`TokstudyError` line naming its key)."""
    return StudyPlan(Study(config))


class StudyPlan:
    """Every section planner of a study, built (and so checked) once, in this order."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.tokenizers = TokenizersPlanner(study)
        self.metrics = MetricsPlanner(study, self.tokenizers)
        self.corpora = CorporaPlanner(study, self.tokenizers)
        self.models = ModelsPlanner(study, self.tokenizers)
        self.nmt = NMTPlanner(study, self.tokenizers)
        self.analyses = AnalysesPlan(self)
        self.analyses.check()
        self.page = PagePlanner(study, self.tokenizers, self.metrics, self.analyses, self.models)
        for rule in GPU_RULES:  # what the rules ask when Snakemake builds their jobs
            self.resources(rule)

    def targets(self) -> list[str]:
        """Everything the study produces (``rule all``), each file once."""
        planners = (self.corpora, self.tokenizers, self.metrics, self.models, self.nmt)
        paths = [path for planner in planners for path in planner.targets()]
        paths += self.analyses.targets()
        paths += self.page.targets()
        return list(dict.fromkeys(paths))

    def cost_sources(self) -> list[dict[str, Any]]:
        """Every row of the cost table: the cells' (metrics planner), then the analyses'
        (the multilingual tokenizers')."""
        return self.metrics.cost_sources() + self.analyses.cost_sources()

    def threads(self, rule: str) -> int:
        """The threads of a rule (defaults, then the study's ``resources:``)."""
        return rule_resources(rule, self.study.config["resources"])["threads"]

    def resources(self, rule: str, cells: int = 1) -> dict[str, Any]:
        """The resources of a rule but threads: ``mem_mb``, ``runtime`` and any cluster key;
        the run time is ``cells`` times its entry's for a job that runs that many cells.
        A training rule whose model trains on ``devices: N > 1`` GPUs asks for ``gpu: N``
        (a study's ``resources.<rule>.gpu`` must then say the same)."""
        resolved = rule_resources(rule, self.study.config["resources"])
        resolved["runtime"] *= cells
        devices, devices_key = self._gpus(rule)
        if devices > 1:
            if resolved.get("gpu", devices) != devices:
                raise TokstudyError(
                    f"config key resources.{rule}.gpu ({resolved['gpu']}) differs from "
                    f"{devices_key} ({devices}): the job needs one GPU per process"
                )
            resolved["gpu"] = devices
        return {key: value for key, value in resolved.items() if key != "threads"}

    def _gpus(self, rule: str) -> tuple[int, str]:
        """The GPUs one job of ``rule`` trains on (``devices`` of its section, 1 on the CPU)
        and the config key that says so."""
        sections = self.models.gpu_sections()
        sections["nmt_train"] = ([self.nmt.config.train], "nmt.train.devices")
        settings, key = sections.get(rule, ([], ""))
        gpus = [s.devices for s in settings if s.device != "cpu"]
        return max(gpus, default=1), key

    @cached_property
    def cell_priorities(self) -> CellPriorities:
        """The cells' costs, measured in the cost table of an earlier run (the metrics
        planner's ``cell_costs``) or estimated (:mod:`tokstudy.workflow.cell_priority`)."""
        return CellPriorities.from_table(self.metrics.cell_costs())

    def cell_priority(self, wildcards: Any) -> int:
        """The Snakemake priority of a cell's job (``train_tokenizer``): its cost in
        centiseconds, longest first, or the priority of the cell's models when higher."""
        cell = self.tokenizers.cell(wildcards.language, wildcards.tokenizer, wildcards.size)
        return self._jobs_priority([cell])

    def sizes_priority(self, wildcards: Any) -> int:
        """The priority of a job that trains every size of one language and tokenizer
        (``train_tokenizer_sizes``): its cells' costs added, or the priority of their
        models when higher."""
        language, tokenizer = wildcards.language, wildcards.tokenizer
        sizes = self.tokenizers.shared_vocab_sizes()
        return self._jobs_priority([make_cell(language, tokenizer, size) for size in sizes])

    def _jobs_priority(self, cells: list[Cell]) -> int:
        cost = sum(self.cell_priorities.priority(cell) for cell in cells)
        return max(cost, *(self.models.cell_model_priority(cell) for cell in cells))

    def corpus_priority(self, wildcards: Any) -> int:
        """The priority of ``prepare_corpus``: the highest of its language's cell jobs.

        Snakemake gives no job the priority of the jobs that wait for it: a corpus
        prepared late would hold back the longest cells of its language.
        """
        cells = [cell for cell in self.tokenizers.cells() if cell.language == wildcards.language]
        return max(
            (
                self.sizes_priority(cell)
                if self.tokenizers.is_trained_together(cell)
                else self.cell_priority(cell)
                for cell in cells
            ),
            default=0,
        )
