"""Training a tokenizer into a directory: adapter files + ``vocab.tsv`` + ``meta.json``.

``vocab.tsv`` lists every vocabulary item in id order with its frequency in the tokenized
training text (``token<TAB>frequency``); ``meta.json`` records what was asked for and what
was reached, so a run can always be traced back to its configuration, and the SHA-256 of
every other file (see :mod:`tokstudy.tokenizers.directory`).
"""

from __future__ import annotations

import logging
from pathlib import Path

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


def train_to_directory(name: str, corpus: Path, spec: TrainSpec, directory: Path) -> Tokenizer:
    """Train adapter ``name`` on ``corpus`` and save it with its vocabulary and metadata."""
    log.info("training %s (%s), requested size %s", name, spec.label, spec.vocab_size)
    tokenizer = adapter_class(name).train(Path(corpus), spec)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(directory)
    log.info(
        "trained %s: %d vocabulary items; counting training frequencies", name, len(tokenizer.vocab)
    )
    write_vocab_tsv(directory / VOCAB_FILE, tokenizer.vocab, token_counts(tokenizer, Path(corpus)))
    meta = {
        "tokenizer": name,
        "language": spec.label,
        "requested_vocab_size": spec.vocab_size,
        "vocab_size": len(tokenizer.vocab),
        "params": spec.params,
        "seed": spec.seed,
        "size_policy": spec.size_policy,
        "tokstudy_version": __version__,
    }
    write_meta(directory, meta)
    return tokenizer
