"""sacreBLEU scores of detokenized translations and paired bootstrap significance.

Scores are sacreBLEU's defaults (BLEU: 13a tokenization, exp smoothing; chrF2), each with
its signature. The significance test is the paired bootstrap of Koehn (2004): the test
set is resampled with replacement (seeded), both systems are scored on every resample
from sacreBLEU's per-sentence sufficient statistics, and the two-sided p-value is
``min(1, 2 × min(P(Δ ≤ 0), P(Δ ≥ 0)))`` with add-one smoothing of each tail. sacreBLEU's
own ``paired_bs`` is not used: it reports p ≈ 0.001 for two identical systems, and it
takes its seed from the environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.metrics.base import Metric

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer

METRICS: dict[str, type[Metric]] = {"bleu": BLEU, "chrf": CHRF}


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
    for name, metric_class in METRICS.items():
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


def resample_counts(n_sentences: int, samples: int, seed: int) -> np.ndarray:
    """``(samples, n_sentences)`` draw counts of a seeded resampling with replacement."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_sentences, size=(samples, n_sentences))
    flat = (np.arange(samples)[:, None] * n_sentences + draws).ravel()
    counts = np.bincount(flat, minlength=samples * n_sentences)
    return counts.reshape(samples, n_sentences).astype(np.float64)


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
    if metric not in METRICS:
        raise TokstudyError(f"unknown metric {metric!r}; valid: {', '.join(sorted(METRICS))}")
    scorer = METRICS[metric]()
    base_stats = _sentence_statistics(scorer, baseline, references)
    system_stats = _sentence_statistics(scorer, system, references)
    full = np.ones((1, len(references)))
    base_score = float(_resampled_scores(scorer, base_stats, full)[0])
    system_score = float(_resampled_scores(scorer, system_stats, full)[0])
    counts = resample_counts(len(references), samples, seed)
    deltas = _resampled_scores(scorer, system_stats, counts) - _resampled_scores(
        scorer, base_stats, counts
    )
    not_better = (np.sum(deltas <= 0) + 1) / (samples + 1)
    not_worse = (np.sum(deltas >= 0) + 1) / (samples + 1)
    low, high = np.percentile(deltas, [2.5, 97.5])
    return BootstrapResult(
        metric=metric,
        baseline_score=base_score,
        system_score=system_score,
        delta=system_score - base_score,
        ci_low=float(low),
        ci_high=float(high),
        p_value=float(min(1.0, 2 * min(not_better, not_worse))),
        bootstrap_samples=samples,
        bootstrap_seed=seed,
    )
