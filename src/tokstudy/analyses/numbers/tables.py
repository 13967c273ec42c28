"""The numbers analysis on files: the numbers of each source, the table per tokenizer and
source, and the plot of tokens per number by digit count."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from tokstudy.analyses.numbers.digits import generated_numbers, number_table, numbers_in, summarise
from tokstudy.analyses.table_files import write_table
from tokstudy.corpora.ud import sentence_texts
from tokstudy.corpora.udhr import read_articles
from tokstudy.figures.layout import save_figure
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)


def collect_numbers(
    seed: int, per_length: int, pud: Sequence[Path], udhr: Sequence[Path]
) -> list[tuple[str, str]]:
    """``(number, source)``: the generated numbers (source ``generated_<form>``), then the
    distinct numbers of the PUD sentences (``pud``) and the UDHR translations (``udhr``)."""
    numbers = [(n, f"generated_{form}") for n, form in generated_numbers(seed, per_length)]
    for source, texts in (
        ("pud", (t for path in pud for t in sentence_texts(Path(path)).values())),
        ("udhr", (t for path in udhr for t in read_articles(Path(path)).values())),
    ):
        found = sorted(set(numbers_in(texts)))
        log.info("%s: %d distinct numbers", source, len(found))
        numbers += [(n, source) for n in found]
    return numbers


def write_numbers(
    seed: int,
    per_length: int,
    pud: Sequence[Path],
    udhr: Sequence[Path],
    tokenizers: Sequence[Mapping[str, Any]],
    csv: Path,
    markdown: Path,
) -> pd.DataFrame:
    """One row per tokenizer × source (see :mod:`tokstudy.analyses.numbers.digits`)."""
    numbers = collect_numbers(seed, per_length, pud, udhr)
    rows = []
    for entry in tokenizers:
        table = number_table(load_tokenizer(Path(entry["directory"])), numbers)
        for source, part in table.groupby("source", sort=True):
            rows.append(
                {
                    "tokenizer": entry["label"],
                    "kind": entry["kind"],
                    "source": source,
                    **summarise(part),
                }
            )
        generated = table[table["source"] == "generated_plain"]
        for digits, part in generated.groupby("digits", sort=True):
            rows.append(
                {
                    "tokenizer": entry["label"],
                    "kind": entry["kind"],
                    "source": f"generated_plain_{digits:02d}_digits",
                    **summarise(part),
                }
            )
        log.info("%s: %s", entry["label"], summarise(generated)["direction"])
    frame = pd.DataFrame(rows)
    write_table(frame, csv, markdown, "How tokenizers cut numbers")
    return frame


def plot_numbers(table: Path, outputs: Sequence[Path]) -> None:
    """Tokens per generated plain integer against its digit count, a line per tokenizer."""
    frame = pd.read_csv(table)
    rows = frame[frame["source"].str.match(r"generated_plain_\d+_digits")]
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for label, part in rows.groupby("tokenizer", sort=True):
        digits = part["source"].str.extract(r"(\d+)_digits")[0].astype(int)
        axis.plot(digits, part["tokens_per_number"], marker="o", label=label)
    axis.set_xlabel("digits")
    axis.set_ylabel("tokens per number")
    axis.legend(fontsize="x-small", ncol=2)
    figure.suptitle("Tokens per generated integer")
    save_figure(figure, outputs)
