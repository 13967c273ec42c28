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

from tokstudy.errors import one_line
from tokstudy.figures.palette import tokenizer_colour
from tokstudy.report.page.recommend import StudyTables, recommendation
from tokstudy.report.page.segments import (
    Frequencies,
    Sample,
    sample_lines,
    segment_cell,
    text_notes,
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
    languages = sorted(heldout)
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
    panels = {}
    for language in languages:
        panel, table = recommendation(study, language)
        panels[language] = panel
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
