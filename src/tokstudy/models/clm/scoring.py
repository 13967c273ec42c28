"""Scoring a trained decoder: bits per byte of the held-out text (clean and noised) with
its interval, beside the unigram baseline of the same tokens and the ``undertrained`` and
``lossy`` flags (:mod:`tokstudy.models.clm`)."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from transformers import LlamaForCausalLM

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import read_nonblank_lines
from tokstudy.models import noise
from tokstudy.models.clm.stream import (
    LineStream,
    check_vocabulary,
    encode_lines,
    line_bytes,
    scored_stream,
)
from tokstudy.models.clm.train import SUMMARY_FILE
from tokstudy.models.clm.windows import token_nll
from tokstudy.models.config import ClmConfig
from tokstudy.models.data import TokenCorpus, vocab_fingerprint
from tokstudy.models.family import load_transformers_tokenizer
from tokstudy.models.heldout import (
    bits_per_byte_interval,
    decoder_for,
    lossy_bytes,
    per_line_sums,
    roundtrip_share,
)
from tokstudy.models.run_flags import LOSSY_TOLERANCE
from tokstudy.models.tsv_datasets import write_tsv
from tokstudy.training.device import resolve_device

log = logging.getLogger(__name__)

DETAILS_FILE = "clm.json"


def bits_per_byte(nll_nats: float, n_bytes: int) -> float:
    """Σ NLL / ln 2 / bytes."""
    return nll_nats / math.log(2) / n_bytes


def unigram_log2_probs(counts: np.ndarray) -> np.ndarray:
    """log2 of add-one smoothed token probabilities ``(count + 1) / (N + V)``."""
    counts = np.asarray(counts, dtype=np.float64)
    return np.log2(counts + 1) - np.log2(counts.sum() + len(counts))


def unigram_bits(train_counts: np.ndarray, scored: np.ndarray) -> float:
    """Bits of the ``scored`` tokens under the add-one unigram of the training tokens'
    ``train_counts`` (one per vocabulary id)."""
    log2p = unigram_log2_probs(train_counts)
    return float(-log2p[scored].sum())


#: training facts of a run shown beside its scores (``clm.json``, the ``clm`` table), in order
TRAINING_FACTS = (
    "preset",
    "budget",
    "parameters",
    "non_embedding_parameters",
    "epochs_done",
    "steps",
    "train_bytes",
    "train_tokens",
    "training_tokens",
    "unique_training_tokens",
    "tokens_per_parameter",
    "train_flops",
    "validation_lines",
    "best_validation_loss",
    "tokens_per_s",
    "mfu",
)
#: facts read from the run's settings rather than its summary
_FROM_CONFIG = frozenset({"preset", "budget", "validation_lines"})
#: throughput and MFU (empty on the CPU): runs trained before the shared loop lack them
_OPTIONAL = frozenset({"tokens_per_s", "mfu"})


def _training_facts(summary_file: Path) -> dict[str, Any]:
    """The budget of a training run (its ``train.json``), for the tables."""
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    config = summary["config"]
    return {
        key: config[key]
        if key in _FROM_CONFIG
        else summary.get(key)
        if key in _OPTIONAL
        else summary[key]
        for key in TRAINING_FACTS
    }


def score_clm(
    model_dir: Path,
    tokenizer_dir: Path,
    corpus_dir: Path,
    heldout: Path,
    out_tsv: Path,
    config: ClmConfig,
    *,
    noise_levels: Sequence[int] = (),
    noise_seed: int = 0,
    noise_word_fraction: float = 0.2,
) -> pd.DataFrame:
    """Bits per byte of the held-out text, clean (level 0) and at each noise level, beside
    the unigram bits per byte of the same tokens and the ``undertrained`` flag.

    Writes ``level, metric, value, relative_change`` rows to ``out_tsv`` and the counts
    behind them to ``clm.json`` beside it.
    """
    tokenizer = load_transformers_tokenizer(tokenizer_dir)
    check_vocabulary(tokenizer, str(tokenizer_dir))
    corpus = TokenCorpus.open(corpus_dir, vocab_fingerprint(tokenizer.get_vocab()))
    training = LineStream(corpus.ids, corpus.line_offsets, tokenizer.sep_token_id)
    train_counts = training.counts(len(tokenizer), corpus.chunks())
    lines = read_nonblank_lines(heldout, config.heldout_max_lines or None)
    if not lines:
        raise TokstudyError(f"{heldout}: no text lines to score")
    device = resolve_device(config.device, config.on_missing_gpu)
    model = LlamaForCausalLM.from_pretrained(model_dir).to(device).eval()
    noised, _ = noise.noise_lines(
        lines, noise_levels, seed=noise_seed, word_fraction=noise_word_fraction
    )
    decode = decoder_for(tokenizer_dir, tokenizer)
    results, details = {}, {}
    for level, text in {0: lines, **noised}.items():
        encoded = encode_lines(tokenizer, text)
        stream = scored_stream(encoded, tokenizer.sep_token_id)
        nll = token_nll(
            model,
            stream,
            config.context,
            config.window_stride,
            batch_size=config.eval_batch_size,
            device=device,
        )
        per_line_nats = per_line_sums(nll, [len(ids) + 1 for ids in encoded])
        per_line_bytes = line_bytes(text)
        n_bytes = int(per_line_bytes.sum())
        model_bpb = bits_per_byte(float(nll.sum()), n_bytes)
        low, high = bits_per_byte_interval(
            per_line_nats, per_line_bytes, resamples=config.bootstrap_resamples, seed=config.seed
        )
        unigram_bpb = unigram_bits(train_counts, stream[1:]) / n_bytes
        below = 1 - model_bpb / unigram_bpb
        results[level] = {
            "bits_per_byte": model_bpb,
            "bits_per_byte_low": low,
            "bits_per_byte_high": high,
            "unigram_bits_per_byte": unigram_bpb,
            "below_unigram": below,
            "undertrained": float(below < config.undertrained_margin),
            "roundtrip": roundtrip_share(encoded, text, decode),
            "lossy_bytes": lossy_bytes(encoded, text, decode),
        }
        unk = (
            int(np.sum(stream == tokenizer.unk_token_id))
            if tokenizer.unk_token_id is not None
            else 0
        )
        details[level] = {
            "lines": len(text),
            "bytes": n_bytes,
            "tokens_scored": len(stream) - 1,
            "unk_tokens": unk,
            **results[level],
        }
        log.info(
            "level %d%%: %.4f bits per byte (95 %% interval %.4f-%.4f; unigram %.4f, %.1f %% "
            "below), %d tokens, %d bytes, %d [UNK], %.1f %% of lines decode back exactly",
            level,
            model_bpb,
            low,
            high,
            unigram_bpb,
            100 * below,
            len(stream) - 1,
            n_bytes,
            unk,
            100 * results[level]["roundtrip"],
        )
        if unk:
            log.warning("%s: %d held-out tokens are [UNK] (level %d%%)", heldout, unk, level)
        if level == 0 and results[level]["roundtrip"] < 1:
            log.warning(
                "%s: %.1f %% of the held-out lines (%.3f %% of their bytes) do not decode "
                "back to themselves; its model predicts a simpler text than the bytes its "
                "bits are divided by; lossy above %.1f %% of the bytes (normalise the "
                "corpora: corpus_defaults.normalize)",
                tokenizer_dir,
                100 * (1 - results[level]["roundtrip"]),
                100 * results[level]["lossy_bytes"],
                100 * LOSSY_TOLERANCE,
            )
        if level == 0 and results[level]["undertrained"]:
            log.warning(
                "%s: undertrained: %.1f %% below the unigram baseline (margin %.0f %%)",
                model_dir,
                100 * below,
                100 * config.undertrained_margin,
            )
    table = noise.relative_changes(results)
    write_tsv(table, out_tsv)
    summary = {
        "convention": "[SEP] begins the text and ends each line; every token after the "
        "first [SEP] scored; bytes = UTF-8 bytes of the lines plus one newline each; "
        "interval: 95 % percentile bootstrap over lines; roundtrip: share of lines the "
        "tokenizer decodes back exactly; lossy_bytes: share of the bytes not given back",
        "context": config.context,
        "stride": config.window_stride,
        "unigram": "add-one smoothed token frequencies of the training text over the "
        "whole vocabulary",
        "train_tokens_for_unigram": int(train_counts.sum()),
        "training": _training_facts(Path(model_dir).parent / SUMMARY_FILE),
        "levels": details,
    }
    Path(out_tsv).with_name(DETAILS_FILE).write_text(
        json.dumps(summary, indent=1), encoding="utf-8"
    )
    return table
