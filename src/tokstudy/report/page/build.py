"""``results/index.html``: the study page (segmentation viewer, metrics, plots, “which
tokenizer” panel), one offline HTML file: inline script and style, data in a JSON island.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from tokstudy.corpora.udhr import dominant_script, script_name
from tokstudy.errors import one_line
from tokstudy.figures.palette import tokenizer_colour
from tokstudy.files.lines import iter_lines
from tokstudy.report.page.recommend import Criterion, StudyTables, recommendation
from tokstudy.report.page.segments import (
    Frequencies,
    Sample,
    sample_lines,
    segment_cell,
    text_notes,
    udhr_article_one,
)
from tokstudy.report.page.uncertainty import (
    Estimate,
    bootstrap_lines,
    cell_estimates,
    ranked_criteria,
    summarize,
)
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.tokenizers.external import load_any

log = logging.getLogger(__name__)

#: held-out lines shown per language (seeded); with 18 languages × 14 cells the page stays
#: far below 10 MB (docs/study-page.md, "Cost")
SAMPLE_LINES = 12
DATA_MARK = "/*STUDY_DATA*/"


@dataclass(frozen=True)
class PageCell:
    """One cell of the viewer: its tokenizer directory and its frequency table."""

    language: str
    tokenizer: str
    size: str
    kind: str
    directory: Path
    frequencies: Path | None = None

    @property
    def key(self) -> str:
        """The cell's name on the page: ``language|tokenizer|size``."""
        return f"{self.language}|{self.tokenizer}|{self.size}"


@cache
def load_cached(directory: Path) -> Tokenizer:
    """A tokenizer directory loaded once (a pretrained one serves every language)."""
    return load_any(Path(directory))


def sample_json(sample: Sample) -> dict[str, Any]:
    """A language's lines and notes, with each line's own notes (emoji, mixed directions …)."""
    return {
        "lines": [asdict(line) | {"notes": text_notes(line.text)} for line in sample.lines],
        "notes": sample.notes,
    }


def cell_json(cell: PageCell, lines: Sequence[str]) -> dict[str, Any]:
    """One cell's segmentation of ``lines``; a tokenizer that fails becomes a note."""
    head = {"key": cell.key, "language": cell.language, "tokenizer": cell.tokenizer}
    head |= {"size": cell.size, "kind": cell.kind}
    try:
        tokenizer = load_cached(Path(cell.directory))
        body = segment_cell(tokenizer, lines, Frequencies(cell.frequencies))
    except Exception as exc:
        log.warning("%s: cannot segment (%s)", cell.key, one_line(exc))
        body = {"lines": None, "tokens": {}, "notes": [f"cannot segment: {one_line(exc)}"]}
    return head | body


def render(data: Mapping[str, Any]) -> str:
    """The page template with ``data`` as its JSON island (``</`` escaped)."""
    template = resources.files(__package__).joinpath("template.html").read_text("utf-8")
    island = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    island = island.replace("</", "<\\/").replace("<!--", "<\\!--")
    return template.replace(DATA_MARK, island)


def colours(names: Sequence[str]) -> dict[str, str]:
    """The palette colour of each tokenizer name."""
    return {name: tokenizer_colour(name) for name in sorted(set(names))}


def _finite(value: float) -> float | None:
    """A number for the JSON island (which holds no NaN)."""
    return None if value != value else float(value)


def _jsonable(value: Any) -> Any:
    """``value`` with every NaN float turned into ``None``."""
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    return _finite(value) if isinstance(value, float) else value


def language_answer(
    study: StudyTables,
    language: str,
    cells: Sequence[PageCell],
    heldout: Path | None,
    seed: int,
) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """The panel, the summary (:func:`~tokstudy.report.page.uncertainty.summarize`) and
    the recommendation table of ``language``, each cell's held-out metrics resampled over
    the same held-out lines."""
    panel, table = recommendation(study, language)
    criteria = [Criterion(**criterion) for criterion in panel["criteria"]]
    ranked = [criterion.name for criterion in ranked_criteria(criteria)]
    exists = heldout is not None and Path(heldout).is_file()
    lines = bootstrap_lines(list(iter_lines(heldout)) if exists else [], seed)
    estimates: dict[tuple[str, str], dict[str, Estimate]] = {}
    for cell in cells if lines and ranked else []:
        try:
            tokenizer = load_cached(Path(cell.directory))
        except Exception as exc:  # the viewer notes it already
            log.warning("%s: no interval (%s)", cell.key, one_line(exc))
            continue
        estimates[(cell.tokenizer, cell.size)] = cell_estimates(tokenizer, lines, ranked, seed=seed)
    summary, table = summarize(table, criteria, estimates, len(lines))
    for entry in panel["cells"]:
        found = estimates.get((entry["tokenizer"], entry["size"]), {})
        entry["intervals"] = {name: [e.low, e.high] for name, e in found.items()}
    log.info("%s: recommended %s", language, summary["cell"])
    return _jsonable(panel), _jsonable(summary), table


def language_name(code: str) -> str:
    """``Persian (fa)`` from CLDR's names (Babel); the bare code where CLDR has none."""
    from babel import Locale, UnknownLocaleError

    try:
        return f"{Locale.parse(code.replace('-', '_')).get_display_name('en')} ({code})"
    except (UnknownLocaleError, ValueError):
        return code


def font_script(sample: Sample) -> str:
    """The name of the script most of a language's sample letters are in (``Bengali``):
    the page names it when the browser has no font for them."""
    return script_name(dominant_script(" ".join(line.text for line in sample.lines))[0])


def _metrics_json(study: StudyTables) -> dict[str, Any]:
    frame = study.metrics.astype({"vocab_size": "int64"}).astype(object)
    frame = frame.where(frame.notna(), None)
    return {"columns": list(frame.columns), "rows": frame.to_numpy().tolist()}


def build_study_page(
    cells: Sequence[PageCell],
    heldout: Mapping[str, Path],
    words: Mapping[str, Sequence[str]],
    extra: Mapping[str, Mapping[str, str]],
    study: StudyTables,
    plots: Sequence[Path],
    output: Path,
    recommendation_csv: Mapping[str, Path],
    seed: int,
    sample_count: int = SAMPLE_LINES,
    title: str = "tokstudy",
) -> dict[str, Any]:
    """Write the study page and the recommendation tables; return what it measured
    (bytes, wall and CPU seconds, lines, cells, notes)."""
    started, cpu = time.perf_counter(), time.process_time()
    output = Path(output)
    languages = list(heldout)  # the config's order: the page opens on its first language
    samples = {
        language: sample_lines(
            heldout.get(language), sample_count, seed, words.get(language, ()), extra.get(language)
        )
        for language in languages
    }
    cell_data = []
    for cell in cells:
        cell_data.append(cell_json(cell, [line.text for line in samples[cell.language].lines]))
        log.info("segmented %s", cell.key)
    panels, summaries = {}, {}
    for language in languages:
        panel, summary, table = language_answer(
            study,
            language,
            [c for c in cells if c.language == language],
            heldout.get(language),
            seed,
        )
        panels[language], summaries[language] = panel, summary
        table.insert(0, "language", language)
        Path(recommendation_csv[language]).parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(recommendation_csv[language], index=False)
    notes = [] if any(c.kind == "pretrained" for c in cells) else ["no pretrained tokenizers"]
    if study.downstream is None:
        notes.append("no downstream scores: the panel ranks on intrinsic measures and cost")
    data = {
        "title": title,
        "live": False,
        "languages": languages,
        "colours": colours([cell.tokenizer for cell in cells]),
        "samples": {language: sample_json(samples[language]) for language in languages},
        "cells": cell_data,
        "metrics": _metrics_json(study),
        "plots": [os.path.relpath(plot, output.parent) for plot in plots],
        "recommendation": panels,
        "summary": summaries,
        "scripts": {language: font_script(samples[language]) for language in languages},
        "names": {language: language_name(language) for language in languages},
        "notes": notes,
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    page = render(data)
    output.write_text(page, encoding="utf-8")
    figures = {
        "bytes": len(page.encode("utf-8")),
        "seconds": round(time.perf_counter() - started, 2),
        "cpu_seconds": round(time.process_time() - cpu, 2),
        "languages": len(languages),
        "cells": len(cells),
        "lines": sum(len(s.lines) for s in samples.values()),
        "notes": notes + [n for s in samples.values() for n in s.notes],
    }
    log.info("study page %s: %s", output, figures)
    return figures


def write_study_page(
    cells: Sequence[Mapping[str, Any]],
    heldout: Mapping[str, Path],
    words: Mapping[str, Sequence[str]],
    udhr: Mapping[str, Path],
    metrics: Path,
    tables: Mapping[str, Path | None],
    plots: Sequence[Path],
    page: Path,
    recommendations: Sequence[Path],
    seed: int,
) -> dict[str, Any]:
    """What rule ``study_page`` runs: :func:`build_study_page` of the study's cells
    (mappings of language, tokenizer, size, kind, tokenizer directory and frequency table),
    its held-out texts, words and UDHR translations (article 1 joins the samples) by
    language, its metrics table and the other tables :meth:`StudyTables.read` takes, its
    plots; ``recommendations``: one table per language of ``heldout``, in its order."""
    page_cells = [
        PageCell(
            **{key: cell[key] for key in ("language", "tokenizer", "size", "kind")},
            directory=Path(cell["directory"]),
            frequencies=Path(cell["frequencies"]),
        )
        for cell in cells
    ]
    return build_study_page(
        page_cells,
        heldout,
        words,
        udhr_article_one(udhr),
        StudyTables.read(metrics, tables),
        plots,
        page,
        dict(zip(heldout, recommendations, strict=True)),
        seed,
    )
