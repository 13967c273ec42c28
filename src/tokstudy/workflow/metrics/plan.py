"""The planner of the ``metrics:`` and ``plots:`` sections: intrinsic metrics of every
cell, their tables and plots, and the cost table of the training and metric passes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokstudy.errors import TokstudyError
from tokstudy.metrics.compute import check_metric_names
from tokstudy.tokenizers.cells import ALL_SIZES_LABEL, CORPUS_SPLITS, PRETRAINED, Cell
from tokstudy.workflow.corpora.plan import CorporaPlanner
from tokstudy.workflow.study.paths import CELL, benchmark_path, expand

if TYPE_CHECKING:
    from tokstudy.workflow.study.core import Study
    from tokstudy.workflow.tokenizers.plan import TokenizersPlanner


class MetricsPlanner:
    """``metrics`` and ``plots``: intrinsic metrics of every cell, their tables and plots."""

    METRICS = f"metrics/{CELL}.tsv"
    FREQUENCIES = f"frequencies/{CELL}.tsv"
    #: every metric of every cell (tidy)
    TABLE = "tables/metrics.csv"
    #: one row per tokenizer and size, one column per metric (Markdown, LaTeX)
    WIDE_TABLE = "tables/metrics_{split}.{ext}"
    PLOT = "plots/metrics/{metric}_{split}.{ext}"
    FREQUENCY_PLOT = "plots/frequencies/{language}.{ext}"
    COST_TABLE = "tables/cost.csv"
    COST_PLOT = "plots/cost.{ext}"

    def __init__(self, study: Study, tokenizers: TokenizersPlanner) -> None:
        self.study = study
        self.tokenizers = tokenizers
        check_metric_names(self.names)

    @property
    def names(self) -> list[str]:
        """The metrics of the study, in the order given (the schema requires the key; a
        config built by hand may leave it out)."""
        return list(self.study.config.get("metrics", []))

    @property
    def skip_top_ranks(self) -> int:
        """How many of the most frequent tokens the frequency plots leave out."""
        return self.study.config["plots"]["skip_top_ranks"]

    def frequency_plot_size(self) -> str:
        """The vocabulary size whose token-frequency distributions are plotted."""
        return str(self.study.config["plots"].get("frequency_vocab_size", ""))

    def frequency_plot_jobs(self, language: str) -> list[Cell]:
        """Jobs of one language at the plotted size (sized tokenizers that train it), and the
        pretrained tokenizers scored on it."""
        size = self.frequency_plot_size()
        return [
            j
            for j in self.tokenizers.scored_cells()
            if j.language == language and j.size in (size, PRETRAINED)
        ]

    def frequency_plots(self) -> dict[str, dict[str, Cell]]:
        """The token-frequency plots: per language, each plotted tokenizer's label (its
        name, and a pretrained one's ``(pretrained)``) and cell; none without
        ``plots.frequency_vocab_size``."""
        if not self.frequency_plot_size():
            return {}
        return {
            language: {
                self._frequency_label(cell): cell for cell in self.frequency_plot_jobs(language)
            }
            for language in self.study.languages
        }

    def _frequency_label(self, cell: Cell) -> str:
        if self.tokenizers.is_pretrained(cell.tokenizer):
            return f"{cell.tokenizer} ({cell.size})"
        return cell.tokenizer

    def cost_sources(self) -> list[dict[str, Any]]:
        """The cells' rows of the cost table: cell, step, the file that measured it and the
        texts the step read (:class:`tokstudy.report.cost.CostSource`).

        A trained cell has rows ``train`` and ``metrics`` from its job's phase file and
        ``job`` from the job's benchmark file; a pretrained cell a ``metrics`` row (rule
        ``compute_metrics``'s benchmark). Cells trained in one job for all their sizes
        (``train_sizes_together``) share that job's ``job`` row, whose size is
        :data:`~tokstudy.tokenizers.cells.ALL_SIZES_LABEL` and whose texts are read once per size.
        """
        out = self.study.out
        sources = []
        for job in self.tokenizers.scored_cells():
            cell = {**job.wildcards(), "vocab_size": job.vocab_size}
            both = self._texts(job.language)
            train = both[0]
            if job.size == PRETRAINED:
                steps = [("metrics", benchmark_path("compute_metrics", CELL), both)]
            else:
                phases = self.tokenizers.CELL_COST
                steps = [("train", phases, [train]), ("metrics", phases, both)]
                if not self.tokenizers.is_trained_together(job):
                    steps.append(("job", benchmark_path("train_tokenizer", CELL), both))
            sources += [
                {**cell, "step": step, "figures": out(pattern, **job.wildcards()), "texts": texts}
                for step, pattern, texts in steps
            ]
        return sources + self._sizes_job_sources()

    def _sizes_job_sources(self) -> list[dict[str, Any]]:
        """The ``job`` rows of the jobs that trained every size of one language and
        tokenizer."""
        out, sizes = self.study.out, len(self.tokenizers.shared_sizes())
        benchmark = benchmark_path("train_tokenizer_sizes", self.tokenizers.ALL_SIZES_CELL)
        sources = []
        for tokenizer in self.tokenizers.trained_together():
            for language in self.tokenizers.tokenizer_languages(tokenizer):
                sources.append(
                    {
                        "language": language,
                        "tokenizer": tokenizer,
                        "size": ALL_SIZES_LABEL,
                        "vocab_size": None,
                        "step": "job",
                        "figures": out(benchmark, language=language, tokenizer=tokenizer),
                        "texts": self._texts(language) * sizes,
                    }
                )
        return sources

    def _texts(self, language: str) -> list[str]:
        """The prepared train and held-out text of a language, which a cell job reads."""
        return [
            self.study.out(pattern, language=language)
            for pattern in (CorporaPlanner.TRAIN, CorporaPlanner.HELDOUT)
        ]

    def targets(self) -> list[str]:
        """The metric table, its wide tables and plots, the cost table and plot, and the
        frequency plots (with ``plots.frequency_vocab_size``)."""
        languages = self.study.languages if self.frequency_plot_size() else []
        patterns = [
            [self.TABLE],
            [self.COST_TABLE],
            expand(self.COST_PLOT, ext=["png", "pdf"]),
            expand(self.WIDE_TABLE, split=CORPUS_SPLITS, ext=["md", "tex"]),
            expand(self.PLOT, metric=self.names, split=CORPUS_SPLITS, ext=["png", "pdf"]),
            expand(self.FREQUENCY_PLOT, language=languages, ext=["png", "pdf"]),
        ]
        return [self.study.out(pattern) for group in patterns for pattern in group]

    def cell_costs(self) -> Path:
        """The cost table whose measured cell costs order the cell jobs
        (:mod:`tokstudy.workflow.cell_priority`): key ``cell_costs``, else the study's own."""
        given = self.study.config["cell_costs"]
        if given is None:
            return Path(self.study.out(self.COST_TABLE))
        path = Path(given) if Path(given).is_absolute() else self.study.base / given
        if not path.is_file():
            raise TokstudyError(f"config key cell_costs: file not found: {path}")
        return path
