"""Training a tokenizer into a directory: adapter files + ``vocab.tsv`` + ``meta.json``.

``vocab.tsv`` lists every vocabulary item in id order with its frequency in the tokenized
training text (``token<TAB>frequency``); ``meta.json`` records what was asked for and what
was reached, so a run can always be traced back to its configuration, and the SHA-256 of
every other file (see :mod:`tokstudy.tokenizers.directory`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from tokstudy.files.lines import batched, count_lines, iter_lines
from tokstudy.runtime.progress import heartbeat
from tokstudy.tokenizers.base import Tokenizer, TrainSpec
from tokstudy.tokenizers.directory import VOCAB_FILE, write_meta, write_vocab_tsv
from tokstudy.tokenizers.registry import adapter_class
from tokstudy.tokenizers.train_fraction import lines_used
from tokstudy.version import __version__

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
    with heartbeat(f"training {name} ({spec.label})", log):
        tokenizer = adapter_class(spec.algorithm or name).train(Path(corpus), spec)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(directory)
    log.info("trained %s: %d vocabulary items", name, len(tokenizer.vocab))
    return tokenizer


def training_meta(name: str, spec: TrainSpec) -> dict[str, Any]:
    """The fields of ``meta.json`` that say what was asked of the training
    (``train_fraction`` only below 1, ``max_train_lines`` only when set and ``algorithm``
    only for a named variant, so that earlier directories stay reusable;
    ``training_sample``: the settings with which the library samples the training text,
    defaults included, for an adapter that has them)."""
    adapter = adapter_class(spec.algorithm or name)
    checked = adapter.check_params(spec.params, name=name)
    sample = {key: checked[key] for key in adapter.sample_params}
    return {
        "tokenizer": name,
        **({"algorithm": spec.algorithm} if spec.algorithm else {}),
        "language": spec.label,
        "requested_vocab_size": spec.vocab_size,
        "params": spec.params,
        "seed": spec.seed,
        "size_policy": spec.size_policy,
        **({"train_fraction": spec.train_fraction} if spec.train_fraction != 1 else {}),
        **({"max_train_lines": spec.max_train_lines} if spec.max_train_lines else {}),
        **({"training_sample": sample} if sample else {}),
    }


def train_lines(corpus: Path, spec: TrainSpec) -> dict[str, int]:
    """``used`` and ``total``: the lines of ``corpus`` the training read (``train_fraction``,
    ``max_train_lines``)."""
    total = count_lines(Path(corpus))
    return {"used": lines_used(total, spec.train_fraction, spec.max_train_lines), "total": total}


def finish_directory(
    name: str,
    spec: TrainSpec,
    vocab: list[str],
    counts: np.ndarray,
    directory: Path,
    code: Mapping[str, str] | None = None,
    training: Mapping[str, str] | None = None,
    corpus: Path | None = None,
) -> dict[str, Any]:
    """Add ``vocab.tsv`` (``counts``: the training frequency of every id) and ``meta.json``
    to a directory written by :func:`train_and_save`; return the metadata (without the
    checksums ``meta.json`` adds). ``meta.json`` records ``code`` (the workflow step and
    the fingerprint of its code, :mod:`tokstudy.workflow.code_fingerprint`) and ``training`` (what
    decides whether a later job may reuse the tokenizer: :mod:`tokstudy.workflow.cell_job`)
    when given, and ``train_lines`` (:func:`train_lines`) with the training ``corpus``."""
    write_vocab_tsv(Path(directory) / VOCAB_FILE, vocab, counts)
    meta = {
        **training_meta(name, spec),
        "vocab_size": len(vocab),
        **({"train_lines": train_lines(Path(corpus), spec)} if corpus is not None else {}),
        "tokstudy_version": __version__,
        **({"code": dict(code)} if code else {}),
        **({"training": dict(training)} if training else {}),
    }
    write_meta(Path(directory), meta)
    return meta


def train_to_directory(
    tokenizer: str,
    train: Path,
    spec: TrainSpec,
    out_dir: Path,
    code: Mapping[str, str] | None = None,
    threads: int | None = None,
) -> Tokenizer:
    """Train adapter ``tokenizer`` on the text ``train`` and save it in ``out_dir`` with its
    vocabulary and metadata (``code``: see :func:`finish_directory`; ``threads``, when
    given, in place of ``spec.threads``: a workflow job's cores). What rules
    ``train_multilingual_tokenizer`` and ``nmt_train_tokenizer`` run.

    The frequencies of ``vocab.tsv`` come from one encoding of ``train`` by the trained
    tokenizer (:func:`token_counts`); a study cell gets them from its metric pass instead
    (:func:`tokstudy.workflow.cell_job.train_and_evaluate`).
    """
    if threads:
        spec = dataclasses.replace(spec, threads=threads)
    trained = train_and_save(tokenizer, train, spec, out_dir)
    log.info("counting the training frequencies of %s", tokenizer)
    counts = token_counts(trained, Path(train))
    finish_directory(tokenizer, spec, trained.vocab, counts, Path(out_dir), code, corpus=train)
    return trained
