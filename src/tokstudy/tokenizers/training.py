"""Training a tokenizer into a directory: adapter files + ``vocab.tsv`` + ``meta.json``.

``vocab.tsv`` lists every vocabulary item in id order with its frequency in the tokenized
training text (``token<TAB>frequency``); ``meta.json`` records what was asked for and what
was reached, so a run can always be traced back to its configuration, and the SHA-256 of
every other file (see :mod:`tokstudy.tokenizers.directory`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from tokstudy import __version__
from tokstudy.corpus_io import batched, iter_lines
from tokstudy.tokenizers.base import Tokenizer, TrainSpec
from tokstudy.tokenizers.directory import VOCAB_FILE, write_meta, write_vocab_tsv
from tokstudy.tokenizers.registry import adapter_class

log = logging.getLogger(__name__)

BATCH_LINES = 2048


def token_counts(tokenizer: Tokenizer, corpus: Path, batch_lines: int = BATCH_LINES) -> np.ndarray:
    """Frequency of every vocabulary id in the tokenized corpus, streaming it in batches."""
    counts = np.zeros(len(tokenizer.vocab), dtype=np.int64)
    for batch in batched(iter_lines(corpus), batch_lines):
        ids = [i for line_ids in tokenizer.encode_batch(batch) for i in line_ids]
        counts += np.bincount(np.asarray(ids, dtype=np.int64), minlength=len(counts))
    return counts


def train_and_save(name: str, corpus: Path, spec: TrainSpec, directory: Path) -> Tokenizer:
    """Train adapter ``name`` on ``corpus`` and write the adapter's own files into ``directory``.

    The directory is complete once :func:`finish_directory` has added ``vocab.tsv`` and
    ``meta.json``.
    """
    log.info("training %s (%s), requested size %s", name, spec.label, spec.vocab_size)
    tokenizer = adapter_class(name).train(Path(corpus), spec)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(directory)
    log.info("trained %s: %d vocabulary items", name, len(tokenizer.vocab))
    return tokenizer


def finish_directory(
    name: str, spec: TrainSpec, vocab: list[str], counts: np.ndarray, directory: Path
) -> dict[str, Any]:
    """Add ``vocab.tsv`` (``counts``: the training frequency of every id) and ``meta.json``
    to a directory written by :func:`train_and_save`; return the metadata (without the
    checksums ``meta.json`` adds)."""
    write_vocab_tsv(Path(directory) / VOCAB_FILE, vocab, counts)
    meta = {
        "tokenizer": name,
        "language": spec.label,
        "requested_vocab_size": spec.vocab_size,
        "vocab_size": len(vocab),
        "params": spec.params,
        "seed": spec.seed,
        "size_policy": spec.size_policy,
        "tokstudy_version": __version__,
    }
    write_meta(Path(directory), meta)
    return meta


def train_to_directory(name: str, corpus: Path, spec: TrainSpec, directory: Path) -> Tokenizer:
    """Train adapter ``name`` on ``corpus`` and save it with its vocabulary and metadata.

    The frequencies of ``vocab.tsv`` come from one encoding of ``corpus`` by the trained
    tokenizer (:func:`token_counts`); a study cell gets them from its metric pass instead
    (:func:`tokstudy.cell_job.train_and_evaluate`).
    """
    tokenizer = train_and_save(name, corpus, spec, directory)
    log.info("counting the training frequencies of %s", name)
    finish_directory(
        name, spec, tokenizer.vocab, token_counts(tokenizer, Path(corpus)), Path(directory)
    )
    return tokenizer
