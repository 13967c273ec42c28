"""sacreBLEU scores of detokenized translations and paired bootstrap significance.

Scores are sacreBLEU's defaults (BLEU: 13a tokenization, exp smoothing; chrF2), each with
its signature. The significance test is the paired bootstrap of Koehn (2004): the test
set is resampled with replacement (:func:`tokstudy.statistics.bootstrap.bootstrap_interval`,
seeded), both systems are scored on every resample from sacreBLEU's per-sentence
sufficient statistics, and the two-sided p-value is
:func:`tokstudy.statistics.bootstrap.paired_bootstrap_p` of the differences. sacreBLEU's
own ``paired_bs`` is not used: it reports p ≈ 0.001 for two identical systems, and it
takes its seed from the environment.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.metrics.base import Metric

from tokstudy.errors import TokstudyError
from tokstudy.nmt.data import SplitPairs, parse_direction, split_file
from tokstudy.statistics.bootstrap import bootstrap_interval, paired_bootstrap_p
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)

TRANSLATION_METRICS: dict[str, type[Metric]] = {"bleu": BLEU, "chrf": CHRF}
#: sacreBLEU's private methods the paired bootstrap uses: per-sentence sufficient statistics
#: and a score from summed statistics (its own significance module uses them; chrF has no
#: public equivalent). Each is called in one function below; the supported sacreBLEU
#: versions are pinned in pyproject.toml.
PRIVATE_METHODS = ("_extract_corpus_statistics", "_compute_score_from_stats")


def missing_private_methods() -> list[str]:
    """The private sacreBLEU methods of :data:`PRIVATE_METHODS` the installed version lacks."""
    return [
        f"{metric_class.__name__}.{name}"
        for metric_class in TRANSLATION_METRICS.values()
        for name in PRIVATE_METHODS
        if not callable(getattr(metric_class, name, None))
    ]


def _check_private_methods() -> None:
    if missing := missing_private_methods():
        raise TokstudyError(
            f"sacreBLEU {sacrebleu.__version__} has no {', '.join(missing)}: the paired "
            "bootstrap needs them; install a sacreBLEU that pyproject.toml supports"
        )


def detokenize(tokenizer: Tokenizer, hypotheses: Sequence[Sequence[int]]) -> list[str]:
    """Text of each hypothesis (``tokenizer.decode``); line breaks in it become spaces."""
    return [tokenizer.decode(ids).replace("\r", " ").replace("\n", " ") for ids in hypotheses]


def _checked(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise TokstudyError(
            f"{len(hypotheses)} hypotheses for {len(references)} references: "
            "translations and test set do not match"
        )
    if not references:
        raise TokstudyError("no references to score against")


def corpus_scores(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, float | str]:
    """Corpus BLEU and chrF of detokenized hypotheses, with sacreBLEU signatures."""
    _checked(hypotheses, references)
    scores: dict[str, float | str] = {}
    for name, metric_class in TRANSLATION_METRICS.items():
        metric = metric_class()
        scores[name] = metric.corpus_score(list(hypotheses), [list(references)]).score
        scores[f"{name}_signature"] = str(metric.get_signature())
    return scores


def bleu_on_tokens(
    tokenizer: Tokenizer, hypotheses: Sequence[str], references: Sequence[str]
) -> float:
    """BLEU over space-joined token strings: the HFT paper's (inflated) scoring, for contrast.

    Subword n-grams are easier to match than words, so this is not comparable across
    tokenizers; the study's scores are :func:`corpus_scores` of detokenized text.
    """
    _checked(hypotheses, references)

    def tokens(lines: Sequence[str]) -> list[str]:
        vocab = tokenizer.vocab
        return [" ".join(vocab[i] for i in ids) for ids in tokenizer.encode_batch(list(lines))]

    return BLEU().corpus_score(tokens(hypotheses), [tokens(references)]).score


def sentence_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Sentence-level BLEU (effective n-gram order) of each hypothesis."""
    _checked(hypotheses, references)
    metric = BLEU(effective_order=True)
    return np.array(
        [
            metric.sentence_score(hyp, [ref]).score
            for hyp, ref in zip(hypotheses, references, strict=True)
        ]
    )


@dataclass(frozen=True)
class BootstrapResult:
    """Paired bootstrap of ``system`` against ``baseline`` on one metric."""

    metric: str
    baseline_score: float
    system_score: float
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    bootstrap_samples: int
    bootstrap_seed: int


def _sentence_statistics(metric: Metric, hypotheses: Sequence[str], references: Sequence[str]):
    # sacreBLEU's sufficient statistics per sentence, as its own significance module uses them
    return np.asarray(
        metric._extract_corpus_statistics(list(hypotheses), [list(references)]), dtype=np.float64
    )


def _resampled_scores(metric: Metric, statistics: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Corpus score of every resample, given how often each sentence is drawn."""
    totals = counts @ statistics
    return np.array([metric._compute_score_from_stats(row).score for row in totals])


def _draw_counts(indices: np.ndarray, n_sentences: int) -> np.ndarray:
    """``(resamples, n_sentences)`` draw counts of ``(resamples, n)`` resampled sentence
    indices."""
    flat = (np.arange(len(indices))[:, None] * n_sentences + indices).ravel()
    counts = np.bincount(flat, minlength=len(indices) * n_sentences)
    return counts.reshape(len(indices), n_sentences).astype(np.float64)


def paired_bootstrap(
    baseline: Sequence[str],
    system: Sequence[str],
    references: Sequence[str],
    metric: str = "bleu",
    *,
    samples: int = 1000,
    seed: int = 0,
) -> BootstrapResult:
    """Paired bootstrap resampling test of ``system`` against ``baseline`` (``bleu``/``chrf``)."""
    _checked(baseline, references)
    _checked(system, references)
    _check_private_methods()
    if metric not in TRANSLATION_METRICS:
        raise TokstudyError(
            f"unknown metric {metric!r}; valid: {', '.join(sorted(TRANSLATION_METRICS))}"
        )
    scorer = TRANSLATION_METRICS[metric]()
    base_stats = _sentence_statistics(scorer, baseline, references)
    system_stats = _sentence_statistics(scorer, system, references)
    full = np.ones((1, len(references)))
    base_score = float(_resampled_scores(scorer, base_stats, full)[0])
    system_score = float(_resampled_scores(scorer, system_stats, full)[0])

    def delta(indices: np.ndarray, axis: int = -1) -> np.ndarray:
        # scipy's vectorized percentile bootstrap passes a (resamples, n) batch of indices
        counts = _draw_counts(indices, len(references))
        return _resampled_scores(scorer, system_stats, counts) - _resampled_scores(
            scorer, base_stats, counts
        )

    interval = bootstrap_interval(
        (np.arange(len(references)),), delta, n_resamples=samples, confidence=0.95, seed=seed
    )
    return BootstrapResult(
        metric=metric,
        baseline_score=base_score,
        system_score=system_score,
        delta=system_score - base_score,
        ci_low=interval.low,
        ci_high=interval.high,
        p_value=paired_bootstrap_p(interval.distribution),
        bootstrap_samples=samples,
        bootstrap_seed=seed,
    )


def score_run(
    hypotheses_path: Path,
    split_dir: Path,
    direction: str,
    target_tokenizer_dir: Path,
    out_json: Path,
    *,
    tokenizer: str,
    size: str,
    seed: int,
    split_name: str = "test",
) -> dict[str, Any]:
    """BLEU and chrF of one run's translations, written to ``out_json`` with the run's keys
    (``size``: the run's size label, recorded as ``vocab_size``).

    ``reference_roundtrip_exact`` is the share of references that the target tokenizer
    reproduces exactly (``decode(encode(ref)) == ref``): the ceiling its outputs can reach.
    ``bleu_on_tokens`` is BLEU over token strings, the HFT paper's scoring, for contrast.
    """
    languages = parse_direction(direction)
    pairs = list(SplitPairs(Path(hypotheses_path), split_file(split_dir, split_name, languages[1])))
    hypotheses = [hypothesis for hypothesis, _ in pairs]
    references = [reference for _, reference in pairs]
    target_tokenizer = load_tokenizer(Path(target_tokenizer_dir))
    roundtrip = detokenize(target_tokenizer, target_tokenizer.encode_batch(references))
    result = {
        "direction": direction,
        "tokenizer": tokenizer,
        "vocab_size": size,
        "seed": seed,
        "split": split_name,
        "sentences": len(references),
        "sources": str(split_file(split_dir, split_name, languages[0])),
        "references": str(split_file(split_dir, split_name, languages[1])),
        "hypotheses": str(hypotheses_path),
        **corpus_scores(hypotheses, references),
        "bleu_on_tokens": bleu_on_tokens(target_tokenizer, hypotheses, references),
        "reference_roundtrip_exact": sum(
            decoded == reference for decoded, reference in zip(roundtrip, references, strict=True)
        )
        / len(references),
    }
    Path(out_json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    log.info(
        "%s %s (%s) seed %s: BLEU %.2f, chrF %.2f",
        direction,
        tokenizer,
        size,
        seed,
        result["bleu"],
        result["chrf"],
    )
    return result
