"""The planner of the causal LM (task ``clm``): one model trained from scratch per run and
scale, its settings, its files, and the priorities that start the longest models first."""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from typing import Any

from tokstudy.models.config import CLM_PRESETS, ClmScale
from tokstudy.tokenizers.cells import FULL_SIZE_LABEL, Cell, find_cell
from tokstudy.training.config import seeded_dict
from tokstudy.workflow.models.section import CHARACTERBERT_NAME, ModelsSection
from tokstudy.workflow.models.task_planner import TaskPlanner
from tokstudy.workflow.study.paths import fill


class ClmPlanner(TaskPlanner):
    """The causal LM of every run at every scale (none without the clm task)."""

    #: the causal LM of a run at a scale: its training folder and its scores
    CLM_CELL = f"{ModelsSection.RUN_CELL}/clm/{{scale}}"
    CLM_RUN = f"{ModelsSection.RUN}/clm/{{scale}}"
    CLM_TRAIN = f"{CLM_RUN}/train"
    CLM = f"{CLM_RUN}/clm.tsv"
    CLM_DETAILS = f"{CLM_RUN}/clm.json"

    def __init__(self, section: ModelsSection, served: tuple[str, ...]) -> None:
        if len(served) != 1:
            raise ValueError(f"ClmPlanner plans one task, whose files it names; asked: {served}")
        super().__init__(section, served)

    @cached_property
    def scales(self) -> dict[str, ClmScale]:
        """Every scale of the clm task by name (:attr:`ClmScale.key`): ``models.clm`` on
        every language and seed, then each of ``models.clm_scales`` (none without the clm
        task); resolved once, when first asked."""
        if not self.asked():
            return {}
        models = self.section.config
        scales = (ClmScale(models.languages, models.seeds, models.clm), *models.clm_scales)
        return {
            scale.key: replace(
                scale,
                languages=scale.languages or models.languages,
                seeds=scale.seeds or models.seeds,
            )
            for scale in scales
        }

    def summary_tables(self) -> list[str]:
        """The causal-LM table, and the agreement between scales when there are several
        (none unless asked for)."""
        scales = self.scales
        return (["clm"] if scales else []) + (["clm_scales"] if len(scales) > 1 else [])

    def rules(self) -> tuple[str, ...]:
        """Pretokenizing, training and scoring (none unless asked for)."""
        return ("pretokenize_mlm", "train_clm", "evaluate_clm") if self.asked() else ()

    def gpu_sections(self) -> dict[str, tuple[list[Any], str]]:
        """The ``clm`` settings of every scale."""
        sections = [scale.clm for scale in self.scales.values()]
        return {"train_clm": (sections, "models.clm.devices")}

    def clm_scale_pattern(self) -> str:
        """The ``{scale}`` wildcard's pattern: the names of the scales."""
        return "|".join(self.scales) or "none"

    def clm_priority(self, wildcards: Any) -> int:
        """The Snakemake priority of a causal-LM training job, longest first: a larger
        preset before a smaller one, and within a preset a tokenizer without a size
        (``char``: several times the tokens of a subword vocabulary) before the sized ones,
        so that no long model starts last and runs alone at the end."""
        return self._clm_rank(self.scales[wildcards.scale].clm.preset, wildcards.size)

    @staticmethod
    def _clm_rank(preset: str, size: str) -> int:
        return 2 * list(CLM_PRESETS).index(preset) + int(size == FULL_SIZE_LABEL)

    def cell_model_priority(self, cell: Cell) -> int:
        """The highest priority of the cell's causal-LM training jobs (0 without any).

        Snakemake gives no job the priority of a job that waits for it, so the jobs a
        model needs first (its pretokenized corpus, its tokenizer, its corpus) take this
        one: the long models of one language then do not wait behind short ones of others.
        """
        if cell not in self.section.cells():
            return 0
        ranks = [
            self._clm_rank(scale.clm.preset, cell.size)
            for scale in self.scales.values()
            if cell.language in scale.languages
        ]
        return max(ranks, default=0)

    def pretokenize_priority(self, wildcards: Any) -> int:
        """The priority of a cell's ``pretokenize_mlm`` job: :meth:`cell_model_priority`."""
        cells = self.section.cells()
        return self.cell_model_priority(
            find_cell(cells, wildcards.language, wildcards.tokenizer, wildcards.size)
        )

    def clm_settings(self, scale: str, seed: str) -> dict[str, Any]:
        """The ``clm`` settings of a scale as a dict, with the run's seed."""
        return seeded_dict(self.scales[scale].clm, seed)

    def score_files(self) -> dict[str, dict[str, Any]]:
        """The causal-LM scores of every run and scale with their keys (``scale``: its
        name); none without the clm task. CharacterBERT has no subword vocabulary."""
        files = {}
        for name, scale in self.scales.items():
            pattern = fill(self.CLM, scale=name)
            for job in self.section.cells():
                if job.tokenizer == CHARACTERBERT_NAME or job.language not in scale.languages:
                    continue
                for seed in scale.seeds:
                    keys = {"language": job.language, "tokenizer": job.tokenizer}
                    keys |= {"vocab_size": job.size, "seed": seed, "scale": name}
                    keys["task"] = self.served[0]
                    files[self.section.study.out(pattern, **job.wildcards(), seed=seed)] = keys
        return files
