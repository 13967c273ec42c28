"""Metrics of one tokenizer (trained or pretrained) on named corpora, as tidy and frequency
tables."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from tokstudy.metrics import compute_metrics
from tokstudy.report.tables import tidy_rows
from tokstudy.tokenizers.directory import read_meta
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)


def evaluate_job(
    tokenizer_dir: Path,
    corpora: dict[str, Path],
    metrics_out: Path,
    frequencies_out: Path,
    language: str | None = None,
) -> pd.DataFrame:
    """Metrics of a saved tokenizer on each named corpus (e.g. train, heldout).

    Writes the tidy metric rows and a frequency table with one column per corpus.
    The ``vocab_size`` column holds the requested size, or the reached size for
    tokenizers whose size follows from the data, or a pretrained tokenizer's own size;
    ``kind`` is ``trained`` or ``pretrained``. ``language`` names the text's language
    (default: the one the tokenizer was trained on).
    """
    tokenizer = load_tokenizer(Path(tokenizer_dir))  # checks meta.json and the files first
    meta = read_meta(Path(tokenizer_dir))
    size = meta["requested_vocab_size"] or meta["vocab_size"]
    kind = meta.get("kind", "trained")
    language = language or meta["language"]
    frames, frequencies = [], {"token": tokenizer.vocab}
    for split, corpus in corpora.items():
        log.info("metrics of %s on %s (%s)", tokenizer_dir, split, corpus)
        metrics, counts = compute_metrics(tokenizer, corpus)
        frames.append(tidy_rows(language, meta["tokenizer"], size, split, metrics, kind))
        frequencies[f"{split}_frequency"] = counts
    table = pd.concat(frames, ignore_index=True)
    table.to_csv(metrics_out, sep="\t", index=False)
    pd.DataFrame(frequencies).to_csv(frequencies_out, sep="\t", index_label="id")
    return table


def read_training_frequencies(path: Path) -> np.ndarray:
    """The ``train_frequency`` column of a frequency table written by :func:`evaluate_job`."""
    return pd.read_csv(path, sep="\t", usecols=["train_frequency"])["train_frequency"].to_numpy()
