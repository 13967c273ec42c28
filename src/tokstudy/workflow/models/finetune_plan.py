"""The planner of the fine-tuning tasks of the pretrained MLM (``pos``, ``sentence``, any
task of kind ``finetune``): their data (UD treebanks, silver POS labels, user TSV datasets),
checked at start, and their files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokstudy.errors import TokstudyError
from tokstudy.models.task_registry import TASKS, tasks_reading
from tokstudy.models.tsv_datasets import check_header
from tokstudy.workflow.models.mlm_plan import PRETRAIN_RULES
from tokstudy.workflow.models.section import ModelsSection
from tokstudy.workflow.models.task_planner import TaskPlanner

if TYPE_CHECKING:
    from tokstudy.models.config import ModelsConfig

#: the language that gets silver POS labels (HanTa's German model) without a UD treebank
SILVER_LANGUAGE = "de"
#: what a fine-tuning task may read instead of a UD treebank (a name in its registry
#: entry's ``inputs``), as an error names it
TREEBANK_ALTERNATIVES = {
    "sentence_tsv": "models.sentence_tsv.{language}",
    "silver_pos": f"silver POS labels, which exist only for German ({SILVER_LANGUAGE!r})",
}


class FinetunePlanner(TaskPlanner):
    """Every fine-tuning task of every run: its data, its wildcard and its files."""

    #: one fine-tuning task of a run
    FINETUNE_CELL = f"{ModelsSection.RUN_CELL}/{{task}}"
    FINETUNE_METRICS = f"{ModelsSection.RUN}/{{task}}/metrics.tsv"
    FINETUNE_PREDICTIONS = f"{ModelsSection.RUN}/{{task}}/predictions.tsv"
    FINETUNE_SUMMARY = f"{ModelsSection.RUN}/{{task}}/finetune.json"
    SILVER_TREEBANK = "models/treebanks/{language}/silver"

    def __init__(self, section: ModelsSection, served: tuple[str, ...]) -> None:
        super().__init__(section, served)
        if section.models is not None:
            self._check(section.models)

    def _check(self, models: ModelsConfig) -> None:
        """Every language's treebank and TSV files, and the languages of the TSV files."""
        for language in models.languages:
            self.treebank_folder(language)
            self.sentence_tsv(language)
        for language in models.sentence_tsv:
            if language not in models.languages:
                raise TokstudyError(
                    f"config key models.sentence_tsv.{language}: not in models.languages"
                )

    def treebank_folder(self, language: str) -> Path | None:
        """The UD treebank folder of a language, or ``None``: silver German labels (``de``)."""
        models = self.section.config
        if not set(tasks_reading("treebank")) & set(models.tasks):
            return None
        if language in models.treebanks:
            root = Path(models.ud_root)
            path = root if root.is_absolute() else self.section.study.base / root
            path = path / models.treebanks[language]
            if not path.is_dir():
                raise TokstudyError(f"config key models.treebanks.{language}: no folder {path}")
            return path
        for task in self.asked():
            instead = [data for data in TASKS[task].inputs if data in TREEBANK_ALTERNATIVES]
            if not any(self._has(data, language) for data in instead):
                named = " or ".join(TREEBANK_ALTERNATIVES[data] for data in instead)
                raise TokstudyError(
                    f"config key models.treebanks.{language} is missing: task {task} needs a "
                    "UD treebank" + (f" (or {named.format(language=language)})" if named else "")
                )
        return None

    def _has(self, data: str, language: str) -> bool:
        """Whether ``language`` has ``data`` (a :data:`TREEBANK_ALTERNATIVES` input)."""
        if data == "sentence_tsv":
            return language in self.section.config.sentence_tsv
        return data == "silver_pos" and language == SILVER_LANGUAGE

    def sentence_tsv(self, language: str) -> dict[str, Path]:
        """The TSV files (split → path) of a language's sentence task; empty: none given."""
        models = self.section.config
        dataset = models.sentence_tsv.get(language)
        if dataset is None or not set(tasks_reading("sentence_tsv")) & set(models.tasks):
            return {}
        base = self.section.study.base
        files = {split: base / name for split, name in vars(dataset).items() if name}
        for split, path in files.items():
            if not path.is_file():
                raise TokstudyError(
                    f"config key models.sentence_tsv.{language}.{split}: no file {path}"
                )
            check_header(path)
        return files

    def treebank(self, language: str) -> str:
        """The UD treebank folder of a language, else its silver treebank folder."""
        path = self.treebank_folder(language)
        study = self.section.study
        return str(path) if path else study.out(self.SILVER_TREEBANK, language=language)

    def finetune_data(self, wildcards: Any) -> dict[str, str]:
        """Data of a fine-tuning job: ``treebank``, or ``tsv_<split>`` files (sentence TSV)."""
        if "sentence_tsv" in TASKS[wildcards.task].inputs:
            files = self.sentence_tsv(wildcards.language)
            if files:
                return {f"tsv_{split}": str(path) for split, path in files.items()}
        return {"treebank": self.treebank(wildcards.language)}

    def finetune_task_pattern(self) -> str:
        """The ``{task}`` wildcard's pattern of the fine-tuning rule: every finetune task."""
        return "|".join(self.served)

    def summary_tables(self) -> list[str]:
        """The bootstrap intervals of the fine-tuning scores (none unless asked for)."""
        return ["bootstrap"] if self.asked() else []

    def rules(self) -> tuple[str, ...]:
        """Pretraining and fine-tuning (none unless asked for)."""
        return (*PRETRAIN_RULES, "finetune_model") if self.asked() else ()

    def score_files(self) -> dict[str, dict[str, Any]]:
        """The metrics of every fine-tuning run with its keys."""
        return self.finetune_files(self.FINETUNE_METRICS)

    def finetune_files(self, pattern: str) -> dict[str, dict[str, Any]]:
        """``pattern`` (``FINETUNE_METRICS``, ``FINETUNE_PREDICTIONS``) of every fine-tuning
        run with its keys."""
        return {
            path: keys
            for task in self.asked()
            for path, keys in self.section.run_files(pattern, task).items()
        }
