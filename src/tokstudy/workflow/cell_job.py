"""A study cell's job: train, save and score one tokenizer (:func:`train_and_evaluate`;
several sizes of one language and tokenizer in one process: :func:`train_and_evaluate_sizes`),
or score one already on disk, trained or pretrained (:func:`evaluate_job`), writing its
metrics on named corpora as tidy and frequency tables.

A cell job reuses the tokenizer already in its folder (Snakemake keeps it: the rule's
``update()`` output) when its ``meta.json`` records the same training settings and the same
``training`` record: the fingerprint of the training code (``training_code``, the rule's
parameter: :mod:`tokstudy.workflow.code_fingerprint`) and the SHA-256 of the training text. So a
change to metric code rescores every cell without retraining one; the reused training's
phase costs are those its own job measured (its cost file, also kept by Snakemake). To
retrain anyway, delete the tokenizer folder.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.files.tsv import TIDY_COLUMNS, tidy_records, write_tsv
from tokstudy.metrics.compute import compute_metrics
from tokstudy.runtime.job_cost import PhaseCosts, read_phase_costs
from tokstudy.tokenizers.base import Tokenizer, TrainSpec
from tokstudy.tokenizers.build import finish_directory, train_and_save, training_meta
from tokstudy.tokenizers.directory import META_FILE, read_meta, sha256_of
from tokstudy.tokenizers.registry import adapter_class, load_tokenizer

log = logging.getLogger(__name__)

#: the metrics and the id frequencies of a tokenizer on one corpus (:func:`compute_metrics`)
Scores = tuple[dict[str, float], np.ndarray]


def evaluate_job(
    tokenizer_dir: Path,
    corpora: dict[str, Path],
    metrics_out: Path,
    frequencies_out: Path,
    language: str | None = None,
) -> None:
    """Metrics of a saved tokenizer on each named corpus (e.g. train, heldout).

    Writes the tidy metric rows and a frequency table with one column per corpus (see
    :func:`evaluate_tokenizer`). ``language`` names the text's language (default: the one
    the tokenizer was trained on).
    """
    tokenizer = load_tokenizer(Path(tokenizer_dir))  # checks meta.json and the files first
    meta = read_meta(Path(tokenizer_dir))
    log.info("metrics of %s", tokenizer_dir)
    evaluate_tokenizer(tokenizer, meta, corpora, metrics_out, frequencies_out, language)


def score_saved_tokenizer(
    tokenizer_dir: Path,
    train: Path,
    heldout: Path,
    metrics: Path,
    frequencies: Path,
    language: str | None = None,
) -> None:
    """Metrics of the tokenizer saved in ``tokenizer_dir`` on its ``train`` and ``heldout``
    text (:func:`evaluate_job`): rules ``compute_metrics`` (pretrained cells) and
    ``nmt_tokenizer_metrics``."""
    texts = {"train": train, "heldout": heldout}
    evaluate_job(tokenizer_dir, texts, metrics, frequencies, language)


def evaluate_tokenizer(
    tokenizer: Tokenizer,
    meta: dict[str, Any],
    corpora: dict[str, Path],
    metrics_out: Path,
    frequencies_out: Path,
    language: str | None = None,
    scored: dict[str, Scores] | None = None,
) -> None:
    """Metrics of a loaded tokenizer (its ``meta.json`` in ``meta``) on each named corpus.

    ``scored`` holds corpora already passed through :func:`compute_metrics` (not encoded
    again). The ``vocab_size`` column holds the listed size: the requested size, or the
    reached size for tokenizers whose size follows from the data, or a pretrained
    tokenizer's own size; ``kind`` is ``trained`` or ``pretrained``.
    """
    scored = scored or {}
    listed_size = meta["requested_vocab_size"] or meta["vocab_size"]
    kind = meta.get("kind", "trained")
    language = language or meta["language"]
    rows, frequencies = [], {"token": tokenizer.vocab}
    for split, corpus in corpora.items():
        if split in scored:
            metrics, counts = scored[split]
        else:
            log.info("metrics of %s on %s (%s)", meta["tokenizer"], split, corpus)
            metrics, counts = compute_metrics(tokenizer, corpus)
        rows += tidy_records(language, meta["tokenizer"], listed_size, split, metrics, kind)
        frequencies[f"{split}_frequency"] = counts.tolist()
    write_tsv(metrics_out, TIDY_COLUMNS, rows)
    columns = list(frequencies.values())
    write_tsv(
        frequencies_out, ["id", *frequencies], zip(range(len(columns[0])), *columns, strict=True)
    )


@dataclass(frozen=True)
class CellOutputs:
    """The files one study cell's job writes (:func:`train_and_evaluate`): its tokenizer
    folder, its metric and frequency tables and the cost of its phases."""

    directory: Path
    metrics: Path
    frequencies: Path
    cost: Path


def train_cell(
    tokenizer: str,
    train: Path,
    heldout: Path,
    spec: TrainSpec,
    threads: int,
    out_dir: Path,
    metrics: Path,
    frequencies: Path,
    cost: Path,
    code: Mapping[str, str],
    training_code: str,
) -> None:
    """Rule ``train_tokenizer``: one study cell (:func:`train_and_evaluate`) on its
    ``train`` and ``heldout`` text, trained with the job's ``threads``."""
    train_and_evaluate(
        tokenizer,
        {"train": train, "heldout": heldout},
        dataclasses.replace(spec, threads=threads),
        CellOutputs(out_dir, metrics, frequencies, cost),
        code,
        training_code,
    )


def train_cell_sizes(
    tokenizer: str,
    train: Path,
    heldout: Path,
    specs: Mapping[str, TrainSpec],
    threads: int,
    tokenizers: Sequence[Path],
    metrics: Sequence[Path],
    frequencies: Sequence[Path],
    cost: Sequence[Path],
    code: Mapping[str, str],
    training_code: str,
) -> None:
    """Rule ``train_tokenizer_sizes``: every size of ``specs`` (size label → settings) of
    one language and tokenizer in one job (:func:`train_and_evaluate_sizes`); the files
    ``tokenizers``, ``metrics``, ``frequencies`` and ``cost`` list each size's in that
    order."""
    cells = {
        size: (dataclasses.replace(spec, threads=threads), CellOutputs(*files))
        for (size, spec), *files in zip(
            specs.items(), tokenizers, metrics, frequencies, cost, strict=True
        )
    }
    texts = {"train": train, "heldout": heldout}
    train_and_evaluate_sizes(tokenizer, texts, cells, code, training_code)


def train_and_evaluate(
    name: str,
    corpora: dict[str, Path],
    spec: TrainSpec,
    outputs: CellOutputs,
    code: Mapping[str, str] | None = None,
    training_code: str | None = None,
) -> None:
    """One study cell in one process: train ``name`` on ``corpora["train"]``, save it into
    ``outputs.directory``, write its metrics on every corpus and the cost of both phases.

    With ``training_code`` (the fingerprint of the training code), a tokenizer that an
    earlier job trained into that folder from the same code, settings and text is reused
    (the module's docstring); ``code`` (the step and its fingerprint) goes into
    ``meta.json``.

    The training text is encoded once, by the saved tokenizer: after the adapter's files
    are written it is loaded back with its adapter's ``load`` (what
    :func:`~tokstudy.tokenizers.registry.load_tokenizer` runs once ``meta.json`` has
    verified the files, which it cannot do yet: ``meta.json`` holds the checksum of
    ``vocab.tsv``, whose frequencies come from this pass). The pass's id counts are both
    ``vocab.tsv``'s frequencies and the train split's metrics, then ``vocab.tsv`` and
    ``meta.json`` are written and the other corpora scored. So the files equal those of
    :func:`~tokstudy.tokenizers.build.train_to_directory` (its count pass encodes the same
    lines in the same batches) and the metrics those of :func:`evaluate_job` on the saved
    directory. ``outputs.cost`` gets the phases ``train`` (training and saving) and
    ``metrics`` (loading, the passes, the tables) of
    :class:`~tokstudy.runtime.job_cost.PhaseCosts`.
    """
    directory = Path(outputs.directory)
    costs = PhaseCosts()
    training = (
        {"code": training_code, "text_sha256": sha256_of(Path(corpora["train"]))}
        if training_code
        else None
    )
    reused = _reusable_training(name, spec, directory, Path(outputs.cost), training)
    if reused is None:
        if directory.exists():
            shutil.rmtree(directory)
        with costs.phase("train"):
            train_and_save(name, corpora["train"], spec, directory)
    else:
        log.info(
            "reusing the tokenizer in %s: trained from the same training code, settings and "
            "text; the train phase's cost is that of the job that trained it",
            directory,
        )
        costs.phases["train"] = reused
    with costs.phase("metrics"):
        tokenizer = adapter_class(spec.algorithm or name).load(directory)
        log.info("metrics of %s on train (%s); its counts are vocab.tsv's", name, corpora["train"])
        train = compute_metrics(tokenizer, corpora["train"])
        meta = finish_directory(
            name, spec, tokenizer.vocab, train[1], directory, code, training, corpora["train"]
        )
        evaluate_tokenizer(
            tokenizer,
            meta,
            corpora,
            outputs.metrics,
            outputs.frequencies,
            scored={"train": train},
        )
    costs.write(outputs.cost)
    log.info("cost: %s", ", ".join(map(_phase_summary, costs.phases.items())))


def train_and_evaluate_sizes(
    name: str,
    corpora: dict[str, Path],
    cells: Mapping[str, tuple[TrainSpec, CellOutputs]],
    code: Mapping[str, str] | None = None,
    training_code: str | None = None,
) -> None:
    """Several study cells of one language and tokenizer in one process, one after the
    other: size label → its settings and files, each cell as :func:`train_and_evaluate`
    (its own phase costs, its own reuse of an earlier training)."""
    for number, (size, (spec, outputs)) in enumerate(cells.items(), start=1):
        log.info("size %s of %s: cell %d of %d", size, name, number, len(cells))
        train_and_evaluate(name, corpora, spec, outputs, code, training_code)


def _reusable_training(
    name: str,
    spec: TrainSpec,
    directory: Path,
    cost_file: Path,
    training: dict[str, str] | None,
) -> dict[str, float] | None:
    """The train phase's cost of the tokenizer in ``directory`` if it can be reused: its
    ``meta.json`` (checksums verified) records the settings of ``spec`` and ``training``,
    and ``cost_file`` that phase; else ``None``, the log saying why."""
    if training is None or not (directory / META_FILE).is_file():
        return None
    expected = json.loads(json.dumps({**training_meta(name, spec), "training": training}))
    try:
        meta = read_meta(directory)
        differing = sorted(key for key, value in expected.items() if meta.get(key) != value)
        if differing:
            log.info("retraining %s: its %s changed", directory, ", ".join(differing))
            return None
        phases = read_phase_costs(cost_file)
    except TokstudyError as exc:
        log.info("retraining %s: %s", directory, exc)
        return None
    if "train" not in phases:
        log.info("retraining %s: %s has no train phase", directory, cost_file)
        return None
    return phases["train"]


def _phase_summary(phase: tuple[str, dict[str, float]]) -> str:
    name, figures = phase
    compiling = figures["compile_seconds"]
    note = f" (of which {compiling:.1f} s compiling numba kernels)" if compiling > 0 else ""
    return f"{name} {figures['seconds']:.1f} s{note}"
