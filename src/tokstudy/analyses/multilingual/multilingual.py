"""One tokenizer, several languages: a temperature-sampled mix and per-language usage.

Sampling (XLM-style): language ``l`` with ``n_l`` lines gets probability
``p_l ∝ n_l ** (1 / T)``. ``T = 1`` keeps the natural proportions, larger ``T`` flattens
them towards uniform. The mix has ``total_lines`` lines (default: as many as all corpora
together); each language's share is ``p_l · total`` rounded by largest remainder (ties to
the language that comes first by code), so proportions are exact and only the choice of
lines is random. A language needing more lines than it has is repeated whole as often as
needed and the rest drawn without replacement; the mixed lines are shuffled. Empty lines
are ignored. Everything random comes from one ``numpy`` generator seeded with ``seed``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import batched, iter_text_lines, write_text_lines
from tokstudy.tokenizers.base import Tokenizer

log = logging.getLogger(__name__)

BATCH_LINES = 2048


def temperature_probabilities(sizes: Mapping[str, int], temperature: float) -> dict[str, float]:
    """``p_l ∝ n_l ** (1 / T)`` for each language."""
    if temperature <= 0:
        raise TokstudyError(f"sampling temperature must be positive, got {temperature}")
    if not sizes or any(n <= 0 for n in sizes.values()):
        raise TokstudyError(f"every language needs at least one line to be sampled: {dict(sizes)}")
    weights = {lang: float(n) ** (1.0 / temperature) for lang, n in sizes.items()}
    total = sum(weights.values())
    return {lang: weight / total for lang, weight in sorted(weights.items())}


def allocate(probabilities: Mapping[str, float], total: int) -> dict[str, int]:
    """Split ``total`` lines by ``probabilities``, rounding by largest remainder."""
    langs = sorted(probabilities)
    exact = np.array([probabilities[lang] * total for lang in langs])
    counts = np.floor(exact).astype(int)
    order = sorted(range(len(langs)), key=lambda i: (-(exact[i] - counts[i]), langs[i]))
    for i in order[: total - counts.sum()]:
        counts[i] += 1
    return {lang: int(n) for lang, n in zip(langs, counts, strict=True)}


def _draw(rng: np.random.Generator, available: int, wanted: int) -> np.ndarray:
    whole, rest = divmod(wanted, available)
    return np.concatenate(
        [np.tile(np.arange(available), whole), rng.choice(available, rest, replace=False)]
    )


def sample_mixed_corpus(
    corpora: Mapping[str, Path],
    output: Path,
    temperature: float,
    seed: int,
    total_lines: int | None = None,
    languages_output: Path | None = None,
) -> pd.DataFrame:
    """Write a temperature-sampled mix of the corpora; one summary row per language.

    With ``languages_output``, also the language of each mixed line, one code per line
    (what a parity-aware tokenizer reads to split the mix by language)."""
    texts = {}
    for lang in sorted(corpora):
        texts[lang] = [line for line in iter_text_lines(corpora[lang]) if line.strip()]
        if not texts[lang]:
            raise TokstudyError(f"{corpora[lang]}: corpus for {lang!r} has no non-empty lines")
    sizes = {lang: len(lines) for lang, lines in texts.items()}
    probabilities = temperature_probabilities(sizes, temperature)
    total = sum(sizes.values()) if total_lines is None else total_lines
    if total <= 0:
        raise TokstudyError(f"total_lines must be positive, got {total}")
    counts = allocate(probabilities, total)
    rng = np.random.default_rng(seed)
    mixed, origin = [], []
    for lang in sorted(texts):
        mixed += [texts[lang][i] for i in _draw(rng, sizes[lang], counts[lang])]
        origin += [lang] * counts[lang]
    order = rng.permutation(len(mixed))
    write_text_lines(output, [mixed[i] for i in order])
    if languages_output is not None:
        write_text_lines(languages_output, [origin[i] for i in order])
    log.info(
        "wrote %d mixed lines of %d languages (T=%g) to %s",
        len(mixed),
        len(texts),
        temperature,
        output,
    )
    natural = sum(sizes.values())
    return pd.DataFrame(
        [
            {
                "language": lang,
                "lines": sizes[lang],
                "natural_share": sizes[lang] / natural,
                "probability": probabilities[lang],
                "sampled_lines": counts[lang],
            }
            for lang in sorted(texts)
        ]
    )


def _encoded(tokenizer: Tokenizer, lines: Sequence[str], language: str) -> list[list[int]]:
    encoded: list[list[int]] = []
    for batch in batched(lines, BATCH_LINES):
        encoded += tokenizer.encode_batch(batch)
    log.info("%s: encoded %d lines", language, len(encoded))
    return encoded


def _content_items(tokenizer: Tokenizer) -> int:
    uncounted = set(tokenizer.special_ids) | ({tokenizer.unk_id} - {None})
    return len(tokenizer.vocab) - len(uncounted)


def vocabulary_share(tokenizer: Tokenizer, texts: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Per language: vocabulary items its text uses, and those no other language uses.

    Shares are of the vocabulary without special tokens and ``[UNK]``, which are never
    counted as used.
    """
    uncounted = set(tokenizer.special_ids) | ({tokenizer.unk_id} - {None})
    used = {
        lang: {i for ids in _encoded(tokenizer, texts[lang], lang) for i in ids} - uncounted
        for lang in sorted(texts)
    }
    items = _content_items(tokenizer)
    rows = []
    for lang, mine in used.items():
        others = set().union(*(ids for other, ids in used.items() if other != lang))
        exclusive = mine - others
        rows.append(
            {
                "language": lang,
                "items_used": len(mine),
                "share_used": len(mine) / items,
                "items_exclusive": len(exclusive),
                "share_exclusive": len(exclusive) / items,
            }
        )
    return pd.DataFrame(rows)


def fertility_by_language(tokenizer: Tokenizer, texts: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Per language: tokens per whitespace word, tokens per character and ``[UNK]`` rate.

    Words are whitespace-separated, so for scripts written without spaces (Japanese)
    fertility is tokens per space-free chunk; ``tokens_per_char`` compares across scripts.
    """
    rows = []
    for lang in sorted(texts):
        lines = texts[lang]
        encoded = _encoded(tokenizer, lines, lang)
        tokens = sum(len(ids) for ids in encoded)
        words = sum(len(line.split()) for line in lines)
        chars = sum(len("".join(line.split())) for line in lines)
        unknown = (
            sum(ids.count(tokenizer.unk_id) for ids in encoded)
            if tokenizer.unk_id is not None
            else 0
        )
        rows.append(
            {
                "language": lang,
                "lines": len(lines),
                "words": words,
                "tokens": tokens,
                "fertility": tokens / words if words else float("nan"),
                "tokens_per_char": tokens / chars if chars else float("nan"),
                "unk_rate": unknown / tokens if tokens else float("nan"),
            }
        )
    return pd.DataFrame(rows)
