"""Tokenization parity (Petrov et al., 2023, "Language Model Tokenizers Introduce
Unfairness Between Languages").

The parity of a sentence pair is ``tokens(target sentence) / tokens(reference sentence)``,
e.g. Marathi over English: above 1 the target language pays more tokens for the same
content. A pair whose reference sentence has no tokens has no ratio (``NaN``) and is left
out of the statistics, which count such pairs as ``undefined``.

Two inputs: two line-aligned texts (:func:`tokenization_parity`), or a multi-parallel
corpus of sentences keyed by id in many languages (:func:`parallel_parity`), which gives
each language's *premium* over the reference and, per tokenizer, how unequal the premiums
are (:func:`fairness_summary`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import chain

import numpy as np
import pandas as pd

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import batched
from tokstudy.tokenizers.base import Tokenizer

BATCH_LINES = 2048
DEFAULT_QUANTILES = (0.05, 0.25, 0.75, 0.95)


def _token_counts(tokenizer: Tokenizer, lines: Sequence[str]) -> list[int]:
    return [
        len(ids) for batch in batched(lines, BATCH_LINES) for ids in tokenizer.encode_batch(batch)
    ]


def tokenization_parity(
    reference_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    reference_lines: Sequence[str],
    target_lines: Sequence[str],
) -> pd.DataFrame:
    """Per line pair: token counts and ``target / reference`` ratio (line numbers from 1).

    The two tokenizers may be the same object (a multilingual tokenizer).
    """
    if len(reference_lines) != len(target_lines):
        raise TokstudyError(
            f"parallel text is not line-aligned: {len(reference_lines)} reference lines, "
            f"{len(target_lines)} target lines"
        )
    reference = np.array(_token_counts(reference_tokenizer, reference_lines), dtype=np.int64)
    target = np.array(_token_counts(target_tokenizer, target_lines), dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(reference > 0, target / np.maximum(reference, 1), np.nan)
    return pd.DataFrame(
        {
            "line": np.arange(1, len(reference) + 1),
            "reference_tokens": reference,
            "target_tokens": target,
            "ratio": ratio,
        }
    )


def parity_summary(
    table: pd.DataFrame, quantiles: Sequence[float] = DEFAULT_QUANTILES
) -> pd.DataFrame:
    """Mean, median and quantiles of the per-line ratios (one row)."""
    ratios = table["ratio"].dropna()
    row: dict[str, float | int] = {
        "lines": len(table),
        "undefined": int(table["ratio"].isna().sum()),
        "mean": float(ratios.mean()) if len(ratios) else float("nan"),
        "median": float(ratios.median()) if len(ratios) else float("nan"),
    }
    for q in quantiles:
        row[f"q{round(q * 100):02d}"] = float(ratios.quantile(q)) if len(ratios) else float("nan")
    return pd.DataFrame([row])


# --- multi-parallel corpora ------------------------------------------------------------------

#: a byte-fallback token (SentencePiece ``byte_fallback``, Llama/Gemma ``tokenizer.json``)
BYTE_FALLBACK_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")


def byte_fallback_ids(tokenizer: Tokenizer) -> frozenset[int]:
    """Ids of the tokenizer's byte-fallback tokens (``<0xE0>``); empty for most adapters."""
    return frozenset(
        i for i, token in enumerate(tokenizer.vocab) if BYTE_FALLBACK_TOKEN.fullmatch(token)
    )


def _counts_per_text(owner: np.ndarray, hits: np.ndarray, texts: int) -> np.ndarray:
    """How many of each text's tokens are ``hits`` (``owner``: the text of each token)."""
    return np.bincount(owner[hits], minlength=texts)


def text_measures(tokenizer: Tokenizer, texts: Sequence[str]) -> pd.DataFrame:
    """Per text, in order: ``tokens``, UTF-8 ``bytes``, ``chars``, ``roundtrip``
    (``decode(encode(s)) == s``), ``unk`` and ``byte_fallback`` tokens (encoded in batches)."""
    encoded = [
        ids for batch in batched(texts, BATCH_LINES) for ids in tokenizer.encode_batch(batch)
    ]
    lengths = np.array([len(ids) for ids in encoded], dtype=np.int64)
    flat = np.fromiter(chain.from_iterable(encoded), dtype=np.int64, count=int(lengths.sum()))
    owner = np.repeat(np.arange(len(encoded)), lengths)
    unk, fallback = tokenizer.unk_id, byte_fallback_ids(tokenizer)
    return pd.DataFrame(
        {
            "tokens": lengths,
            "bytes": [len(text.encode("utf-8")) for text in texts],
            "chars": [len(text) for text in texts],
            "roundtrip": [
                tokenizer.decode(ids) == text for ids, text in zip(encoded, texts, strict=True)
            ],
            "unk": _counts_per_text(owner, flat == (-1 if unk is None else unk), len(encoded)),
            "byte_fallback": _counts_per_text(
                owner, np.isin(flat, np.fromiter(fallback, dtype=np.int64)), len(encoded)
            ),
        }
    )


def sentence_measures(tokenizer: Tokenizer, texts: Mapping[str, str]) -> pd.DataFrame:
    """:func:`text_measures` per sentence, indexed by ``sent_id`` (sorted)."""
    sent_ids = sorted(texts)
    measures = text_measures(tokenizer, [texts[sent_id] for sent_id in sent_ids])
    measures.index = pd.Index(sent_ids, name="sent_id")
    return measures


def _share(part: float, whole: float) -> float:
    return float(part / whole) if whole else float("nan")


def language_premium(reference: pd.DataFrame, target: pd.DataFrame) -> dict[str, float | int]:
    """The target language's premium over the reference on the sentences both have.

    ``premium`` is total target tokens over total reference tokens, ``premium_median`` the
    median of the per-sentence ratios; ``missing`` counts reference sentences absent from
    the target and ``extra`` target sentences absent from the reference (both left out).
    The other measures describe the target's paired sentences. Takes two
    :func:`sentence_measures` tables.
    """
    shared = reference.index.intersection(target.index).sort_values()
    ref, tgt = reference.loc[shared], target.loc[shared]
    defined = ref["tokens"] > 0
    ratios = tgt["tokens"][defined] / ref["tokens"][defined]
    tokens, reference_tokens = int(tgt["tokens"].sum()), int(ref["tokens"].sum())
    return {
        "sentences": len(shared),
        "missing": len(reference.index.difference(target.index)),
        "extra": len(target.index.difference(reference.index)),
        "undefined": int((~defined).sum()),
        "tokens": tokens,
        "reference_tokens": reference_tokens,
        "premium": _share(tokens, reference_tokens),
        "premium_median": float(ratios.median()) if len(ratios) else float("nan"),
        "bytes_per_token": _share(tgt["bytes"].sum(), tokens),
        "chars_per_token": _share(tgt["chars"].sum(), tokens),
        "roundtrip_share": _share(tgt["roundtrip"].sum(), len(tgt)),
        "unk_rate": _share(tgt["unk"].sum(), tokens),
        "byte_fallback_rate": _share(tgt["byte_fallback"].sum(), tokens),
    }


def parallel_parity(
    texts: Mapping[str, Mapping[str, str]],
    reference: str,
    tokenizers: Mapping[str, Mapping[str, Tokenizer]],
) -> pd.DataFrame:
    """Premium and per-token measures, a row per tokenizer label and language it covers.

    ``texts`` maps a language to its sentences by id; ``tokenizers`` maps a label to the
    tokenizer of each language it covers (one object for all of a multilingual tokenizer's
    languages, one per language for tokenizers trained per language). Every label must
    cover the reference, whose own row has premium 1. Sentences are joined on their ids.
    """
    rows = []
    for label, by_language in tokenizers.items():
        if reference not in by_language:
            raise TokstudyError(
                f"parity tokenizer {label!r} does not cover the reference {reference!r}"
            )
        reference_measures = sentence_measures(by_language[reference], texts[reference])
        for language in sorted(set(by_language) & set(texts)):
            measures = (
                reference_measures
                if language == reference
                else sentence_measures(by_language[language], texts[language])
            )
            rows.append(
                {
                    "tokenizer": label,
                    "language": language,
                    **language_premium(reference_measures, measures),
                }
            )
    return pd.DataFrame(rows)


def gini(values: Sequence[float]) -> float:
    """Gini coefficient of non-negative values: mean absolute difference over all ordered
    pairs divided by twice the mean (0: all equal; ``NaN`` for no values or a zero mean)."""
    x = np.asarray(values, dtype=np.float64)
    if (x < 0).any():
        raise TokstudyError(f"Gini coefficient of negative values: {x[x < 0].tolist()}")
    if x.size == 0 or x.mean() == 0:
        return float("nan")
    return float(np.abs(x[:, None] - x[None, :]).mean() / (2 * x.mean()))


def fairness_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per tokenizer (in table order): how unequal its premiums are across languages.

    ``max_premium``/``min_premium`` with their languages, their ratio, and the Gini
    coefficient of the premiums over ``languages`` languages (the reference's premium of 1
    included; a language without a premium, having no reference tokens, left out).
    """
    rows = []
    for label, group in table.groupby("tokenizer", sort=False):
        valid = group.dropna(subset=["premium"])
        if valid.empty:
            continue
        highest = valid.loc[valid["premium"].idxmax()]
        lowest = valid.loc[valid["premium"].idxmin()]
        rows.append(
            {
                "tokenizer": label,
                "languages": len(valid),
                "max_premium": float(highest["premium"]),
                "max_language": highest["language"],
                "min_premium": float(lowest["premium"]),
                "min_language": lowest["language"],
                "max_min_ratio": _share(highest["premium"], lowest["premium"]),
                "gini": gini(valid["premium"].to_numpy()),
            }
        )
    return pd.DataFrame(rows)
