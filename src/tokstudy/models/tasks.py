"""Evaluating a pretrained model: MLM on clean and noised held-out text, downstream tasks.

:func:`evaluate_mlm` scores held-out text at each noise level; :func:`finetune_pos` and
:func:`finetune_sentence` fine-tune one seed on UPOS tagging or sentence classification
and test on clean and noised text. Tokenizer arguments are folders: a tokstudy tokenizer
folder (with ``meta.json``; loaded through the adapter registry) or a ``transformers``
tokenizer folder (``save_pretrained``); ``None`` for CharacterBERT, which spells
whitespace words and keeps its vocabularies in its own folders. What differs between BERT
and CharacterBERT lives in their :class:`~tokstudy.models.family.ModelFamily`. Table
outputs are tab-separated with a header.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import read_nonblank_lines
from tokstudy.models import (
    classification_scores,
    finetune,
    mlm_scoring,
    noise,
    pretrain,
    ud_sentences,
)
from tokstudy.models.config import (
    EvalConfig,
    FinetuneConfig,
    to_dict,
)
from tokstudy.models.family import (
    ModelFamily,
    family_of_model,
)
from tokstudy.models.task_registry import TASKS
from tokstudy.models.tsv_datasets import check_labels, read_tsv_dataset, write_tsv
from tokstudy.training.device import resolve_device

log = logging.getLogger(__name__)

METRICS_FILE = "metrics.tsv"
PREDICTIONS_FILE = "predictions.tsv"
SUMMARY_FILE = "finetune.json"


def evaluate_mlm(
    model_dir: Path,
    tokenizer_dir: Path | None,
    heldout: Path,
    out_tsv: Path,
    config: EvalConfig,
    *,
    edits_tsv: Path | None = None,
) -> pd.DataFrame:
    """MLM metrics on clean held-out text (level 0) and at each noise level.

    Writes ``level, metric, value, relative_change`` rows (change vs. level 0) to
    ``out_tsv`` and, if given, the noise edits to ``edits_tsv``.
    """
    device = resolve_device(config.device, config.on_missing_gpu)
    scorer = family_of_model(model_dir).scorer(model_dir, tokenizer_dir, device, config.bf16)
    lines = read_nonblank_lines(heldout, config.max_lines)
    if not lines:
        raise TokstudyError(f"{heldout}: no text lines to evaluate on")
    noised, edits = noise.noise_lines(
        lines,
        config.noise_levels,
        seed=config.noise_seed,
        word_fraction=config.noise_word_fraction,
    )
    results = {
        0: mlm_scoring.mlm_metrics(mlm_scoring.score_lines(scorer, lines, config.batch_size))
    }
    for level, text in noised.items():
        log.info("%s: scoring noise level %d%%", heldout, level)
        results[level] = mlm_scoring.mlm_metrics(
            mlm_scoring.score_lines(scorer, text, config.batch_size)
        )
    pretraining = Path(model_dir).parent / pretrain.SUMMARY_FILE
    summary = json.loads(pretraining.read_text(encoding="utf-8")) if pretraining.is_file() else {}
    if "undertrained" in summary:  # a BERT's pretraining flag, beside every level's scores
        flags = {key: summary[key] for key in ("below_unigram", "undertrained")}
        results = {level: scores | flags for level, scores in results.items()}
    table = noise.relative_changes(results)
    write_tsv(table, out_tsv)
    if edits_tsv is not None:
        write_tsv(edits, edits_tsv)
    return table


def finetune_task(
    task: str,
    model_dir: Path,
    tokenizer_dir: Path | None,
    metrics: Path,
    config: FinetuneConfig,
    *,
    treebank: Path | None = None,
    tsv_train: Path | None = None,
    tsv_test: Path | None = None,
    tsv_validation: Path | None = None,
    sentence_feature: str = "Tense=Past",
    sentence_upos: Sequence[str] = ("VERB", "AUX"),
    noise_levels: Sequence[int] = (),
    noise_seed: int = 0,
    noise_word_fraction: float = 0.2,
) -> pd.DataFrame:
    """Fine-tune one model (one seed) on ``task`` with its registered function, into the
    folder of ``metrics`` (rule ``finetune_model``).

    Data: ``treebank``, or a user TSV dataset (``tsv_train``, ``tsv_test`` and perhaps
    ``tsv_validation``); a task with a ``sequence`` head labels treebank sentences by
    ``sentence_feature`` on words of ``sentence_upos``.
    """
    splits = {"train": tsv_train, "test": tsv_test, "validation": tsv_validation}
    tsv = {split: Path(path) for split, path in splits.items() if path is not None}
    registered = TASKS[task]
    data: dict[str, Any] = {"tsv": tsv} if tsv else {"treebank": treebank}
    if registered.head == "sequence" and not tsv:
        data |= {"feature": sentence_feature, "upos": sentence_upos}
    return registered.function()(
        model_dir,
        tokenizer_dir,
        Path(metrics).parent,
        config,
        **data,
        noise_levels=noise_levels,
        noise_seed=noise_seed,
        noise_word_fraction=noise_word_fraction,
    )


def finetune_pos(
    model_dir: Path,
    tokenizer_dir: Path | None,
    out_dir: Path,
    config: FinetuneConfig,
    *,
    treebank: Path,
    noise_levels: Sequence[int] = (),
    noise_seed: int = 0,
    noise_word_fraction: float = 0.2,
) -> pd.DataFrame:
    """Fine-tune UPOS tagging on a UD treebank (one seed); test on clean and noised words."""
    family = family_of_model(model_dir)
    tokenizers = _split_tokenizers(family, model_dir, tokenizer_dir)
    tokenizer = tokenizers["test"]
    splits = ud_sentences.ud_splits(
        treebank, seed=config.seed, validation_fraction=config.validation_fraction
    )
    # UPOS is a closed set: every tag of the treebank, so rare test tags count as errors
    labels = sorted({tag for sents in splits.values() for s in sents for tag in s.upos})
    index = {tag: i for i, tag in enumerate(labels)}

    def examples(
        sentences: Sequence[Sequence[str]], tags: Sequence[Sequence[str]], split: str = "test"
    ) -> list[finetune.Example]:
        ids = [[index[t] for t in sent] for sent in tags]
        return finetune.tagging_examples(tokenizers[split], sentences, ids, config.max_length)

    split_examples = {
        name: examples([s.words for s in sents], [s.upos for s in sents], name)
        for name, sents in splits.items()
    }
    test_words = [list(s.words) for s in splits["test"]]
    test_tags = [s.upos for s in splits["test"]]
    noised, _ = noise.noise_word_lists(
        test_words, noise_levels, seed=noise_seed, word_fraction=noise_word_fraction
    )
    tests = {0: split_examples["test"]} | {
        level: examples(words, test_tags) for level, words in noised.items()
    }
    model = _seeded_task_model(family, model_dir, "pos", labels, config.seed)
    return _train_and_test(
        model, split_examples, tests, labels, tokenizer, config, out_dir, "pos", treebank
    )


def finetune_sentence(
    model_dir: Path,
    tokenizer_dir: Path | None,
    out_dir: Path,
    config: FinetuneConfig,
    *,
    treebank: Path | None = None,
    feature: str = "Tense=Past",
    upos: Sequence[str] = ("VERB", "AUX"),
    tsv: Mapping[str, Path] | None = None,
    noise_levels: Sequence[int] = (),
    noise_seed: int = 0,
    noise_word_fraction: float = 0.2,
) -> pd.DataFrame:
    """Fine-tune sentence classification (one seed); macro-F1 on clean and noised test text.

    Data: a UD ``treebank`` labelled ``yes``/``no`` by ``feature`` (see
    :func:`tokstudy.models.ud_sentences.has_feature`), or ``tsv`` files ``{"train": …, "test": …}``
    (optional ``"validation"``; otherwise a seeded ``validation_fraction`` of train) with
    ``text`` and ``label`` columns.
    """
    if (treebank is None) == (tsv is None):
        raise TokstudyError("finetune_sentence: give exactly one of treebank or tsv")
    if treebank is not None:
        splits = {
            name: ud_sentences.feature_labels(sents, feature, upos)
            for name, sents in ud_sentences.ud_splits(
                treebank, seed=config.seed, validation_fraction=config.validation_fraction
            ).items()
        }
        source: Any = treebank
        where = {name: f"{treebank} ({name})" for name in splits}
    else:
        splits = _tsv_splits(tsv, config)
        source = {k: str(v) for k, v in tsv.items()}
        where = {name: str(tsv.get(name, tsv["train"])) for name in splits}
    labels = sorted({label for _, label in splits["train"]})
    for name in ("validation", "test"):
        check_labels(labels, splits[name], where[name])
    if len(labels) < 2:
        raise TokstudyError(f"{source}: the training data has a single label {labels}")
    family = family_of_model(model_dir)
    tokenizers = _split_tokenizers(family, model_dir, tokenizer_dir)
    tokenizer = tokenizers["test"]
    index = {label: i for i, label in enumerate(labels)}

    def examples(rows: Sequence[tuple[str, str]], split: str = "test") -> list[finetune.Example]:
        texts = [text for text, _ in rows]
        return finetune.sentence_examples(
            tokenizers[split], texts, [index[label] for _, label in rows], config.max_length
        )

    split_examples = {name: examples(rows, name) for name, rows in splits.items()}
    test_texts = [text for text, _ in splits["test"]]
    noised, _ = noise.noise_lines(
        test_texts, noise_levels, seed=noise_seed, word_fraction=noise_word_fraction
    )
    tests = {0: split_examples["test"]} | {
        level: examples(list(zip(texts, [lab for _, lab in splits["test"]], strict=True)))
        for level, texts in noised.items()
    }
    model = _seeded_task_model(family, model_dir, "sentence", labels, config.seed)
    return _train_and_test(
        model, split_examples, tests, labels, tokenizer, config, out_dir, "sentence", source
    )


def _tsv_splits(tsv: Mapping[str, Path], config: FinetuneConfig) -> dict[str, list]:
    unknown = sorted(set(tsv) - {"train", "validation", "test"})
    if unknown or not {"train", "test"} <= set(tsv):
        raise TokstudyError(
            f"finetune_sentence: tsv needs keys train and test (optional validation), got "
            f"{', '.join(sorted(tsv))}"
        )
    splits = {name: read_tsv_dataset(path) for name, path in tsv.items()}
    if "validation" not in splits:
        splits["train"], splits["validation"] = ud_sentences.seeded_split(
            splits["train"], config.validation_fraction, config.seed
        )
    return splits


def _split_tokenizers(
    family: ModelFamily, model_dir: Path, tokenizer_dir: Path | None
) -> dict[str, Any]:
    """The tokenizer of each split: the training tokenizer for ``train`` (it samples for a
    sampling adapter), the deterministic one for ``validation`` and ``test``."""
    evaluation = family.task_tokenizer(model_dir, tokenizer_dir)
    training = family.task_tokenizer(model_dir, tokenizer_dir, training=True)
    return {"train": training, "validation": evaluation, "test": evaluation}


def _seeded_task_model(
    family: ModelFamily, model_dir: Path, task: str, labels: Sequence[str], seed: int
) -> Any:
    """The task model, its new classifier initialised from the torch RNG seeded by ``seed``.

    Seeding before the classifier exists keeps fine-tuning deterministic (torch seeds its
    default generator at random in each process).
    """
    torch.manual_seed(seed)
    return family.load_for_task(model_dir, task, labels)


def _train_and_test(
    model: Any,
    split_examples: Mapping[str, list[finetune.Example]],
    tests: Mapping[int, list[finetune.Example]],
    labels: Sequence[str],
    tokenizer: Any,
    config: FinetuneConfig,
    out_dir: Path,
    task: str,
    source: Any,
) -> pd.DataFrame:
    """Fine-tune, then write metrics, predictions and a summary into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(config.seed)
    result = finetune.finetune(
        model,
        split_examples["train"],
        split_examples["validation"],
        config,
        pad_id=tokenizer.pad_token_id,
    )
    device = resolve_device(config.device, config.on_missing_gpu)
    results, prediction_frames = {}, []
    for level, examples in sorted(tests.items()):
        gold, pred = finetune.predict(
            result.model,
            examples,
            pad_id=tokenizer.pad_token_id,
            batch_size=config.batch_size,
            device=device,
            bf16=config.bf16,
        )
        gold_labels = [labels[i] for i in gold]
        pred_labels = [labels[i] for i in pred]
        results[level] = {
            name: function(gold_labels, pred_labels)
            for name, function in classification_scores.CLASSIFICATION_METRICS.items()
        } | classification_scores.learned_or_not(gold_labels, pred_labels, len(labels))
        prediction_frames.append(
            pd.DataFrame({"level": level, "gold": gold_labels, "pred": pred_labels})
        )
    if results[0]["collapsed"]:
        log.warning(
            "%s: collapsed: test accuracy %.4f against %.4f for the majority class, macro-F1 "
            "%.4f (%d labels): the model did not learn the task",
            out_dir,
            results[0]["accuracy"],
            results[0]["majority_accuracy"],
            results[0]["macro_f1"],
            len(labels),
        )
    metrics = noise.relative_changes(results)
    metrics.insert(0, "task", task)
    write_tsv(metrics, out_dir / METRICS_FILE)
    write_tsv(pd.concat(prediction_frames, ignore_index=True), out_dir / PREDICTIONS_FILE)
    summary = {
        "task": task,
        "source": str(source) if not isinstance(source, dict) else source,
        "labels": list(labels),
        "best_epoch": result.best_epoch,
        "validation_macro_f1": result.validation_macro_f1,
        "sizes": {name: len(ex) for name, ex in split_examples.items()},
        "config": to_dict(config),
    }
    (out_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return metrics
