"""The planner of the study page (``index.html``): what it reads from the other sections
and what it writes (the page and one recommendation table per language)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tokstudy.tokenizers.cells import PRETRAINED
from tokstudy.workflow.analyses.morphology.plan import MorphologyPlanner
from tokstudy.workflow.analyses.parity.plan import ParityPlanner
from tokstudy.workflow.corpora.plan import CorporaPlanner
from tokstudy.workflow.metrics.plan import MetricsPlanner
from tokstudy.workflow.study.paths import expand

if TYPE_CHECKING:
    from tokstudy.workflow.analyses.plan import AnalysesPlan
    from tokstudy.workflow.models.plan import ModelsPlanner
    from tokstudy.workflow.study.core import Study
    from tokstudy.workflow.tokenizers.plan import TokenizersPlanner


class PagePlanner:
    """``results/index.html``: segmentation viewer, metrics, plots and recommendation."""

    PAGE = "index.html"
    RECOMMENDATION = "tables/recommendation_{language}.csv"

    def __init__(
        self,
        study: Study,
        tokenizers: TokenizersPlanner,
        metrics: MetricsPlanner,
        analyses: AnalysesPlan,
        models: ModelsPlanner,
    ) -> None:
        self.study = study
        self.tokenizers = tokenizers
        self.metrics = metrics
        self.analyses = analyses
        self.models = models

    def cells(self) -> list[dict[str, Any]]:
        """Every scored cell: its tokenizer directory and its frequency table."""
        out = self.study.out
        return [
            {
                **job.wildcards(),
                "kind": "pretrained" if job.size == PRETRAINED else "trained",
                "directory": self.tokenizers.tokenizer_dir(job),
                "frequencies": out(MetricsPlanner.FREQUENCIES, **job.wildcards()),
            }
            for job in self.tokenizers.scored_cells()
        ]

    def heldout(self) -> dict[str, str]:
        """The held-out text of each language, in the config's order (the page's)."""
        return {
            language: self.study.out(CorporaPlanner.HELDOUT, language=language)
            for language in self.languages
        }

    def words(self) -> dict[str, list[str]]:
        """The configured segmentation words of each language that has some."""
        segmentation = self.analyses["segmentation"]
        return {language: segmentation.words(language) for language in segmentation.languages()}

    def udhr_article_one(self) -> dict[str, str]:
        """The UDHR translation whose article 1 joins each language's sample, when the
        study has a UDHR parity (by language; empty without)."""
        return self.analyses["udhr"].article_one_files()

    def tables(self) -> dict[str, str]:
        """The optional tables the recommendation reads, those the study writes."""
        out, produced = self.study.out, set(self.analyses.targets()) | set(self.models.targets())
        wanted = {
            "cost": out(MetricsPlanner.COST_TABLE),
            "parity": out(ParityPlanner.PARITY_PUD, ext="csv"),
            "morphology": out(MorphologyPlanner.MORPHOLOGICAL_ALIGNMENT, ext="csv"),
            "downstream": out(self.models.RESULTS_TABLE),
            "morphscore": out(self.analyses["morphscore"].MORPHSCORE, ext="csv"),
            "robustness": out(self.analyses["robustness"].ROBUSTNESS, ext="csv"),
        }
        produced.add(wanted["cost"])
        return {key: path for key, path in wanted.items() if path in produced}

    def plots(self) -> list[str]:
        """The study's PNG plots (metrics, cost, frequencies, analyses, models), shown on
        the page."""
        paths = [
            *self.metrics.targets(),
            *self.analyses.targets(),
            *self.models.targets(),
        ]
        return list(dict.fromkeys(path for path in paths if path.endswith(".png")))

    def recommendations(self) -> list[str]:
        """The recommendation table of every language."""
        return [self.study.out(p) for p in expand(self.RECOMMENDATION, language=self.languages)]

    @property
    def languages(self) -> list[str]:
        """The languages of the page, in the config's order (that of :meth:`heldout`, whose
        order the step pairs with :meth:`recommendations`)."""
        return self.study.languages_as_listed

    def targets(self) -> list[str]:
        """The page and the recommendation tables."""
        return [self.study.out(self.PAGE), *self.recommendations()]
