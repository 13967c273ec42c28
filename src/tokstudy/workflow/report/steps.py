"""Steps of ``workflow/rules/report.smk``: the study page."""

from __future__ import annotations

from pathlib import Path

from tokstudy.report.page.build import PageCell, build_study_page
from tokstudy.report.page.recommend import StudyTables
from tokstudy.report.page.segments import udhr_article_one
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake


def study_page(snakemake: Snakemake) -> None:
    """The study page (``index.html``) and the recommendation table of every language."""
    params = snakemake.params
    cells = [
        PageCell(
            **{key: cell[key] for key in ("language", "tokenizer", "size", "kind")},
            directory=Path(cell["directory"]),
            frequencies=Path(cell["frequencies"]),
        )
        for cell in params.cells
    ]
    languages = list(params.heldout)
    recommendations = dict(zip(languages, map(Path, snakemake.output.recommendations), strict=True))
    run_step(
        snakemake.log[0],
        build_study_page,
        cells,
        {language: Path(path) for language, path in params.heldout.items()},
        dict(params.words),
        udhr_article_one(params.udhr),
        StudyTables.read(Path(snakemake.input.metrics), params.tables),
        [Path(path) for path in snakemake.input.plots],
        Path(snakemake.output.page),
        recommendations,
        params.seed,
    )
