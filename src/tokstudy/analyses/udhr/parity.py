"""Tokenization premiums on the UDHR (:mod:`tokstudy.corpora.udhr`): a row per tokenizer
and translation, the fairness of each tokenizer over ISO 639-3 languages, and the median
premium per script.

The premium of a translation is its tokens over the reference's tokens on the articles both
have (:func:`tokstudy.analyses.parity.parity.language_premium`, articles in place of sentences);
every article of every translation a tokenizer covers is encoded in one batched pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from tokstudy.analyses.parity.parity import gini, language_premium, text_measures
from tokstudy.corpora.udhr import script_name
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer

#: the premiums the fairness table counts languages above
PREMIUM_THRESHOLDS = (2.0, 4.0)


def article_measures(
    tokenizer: Tokenizer, texts: Mapping[str, Mapping[int, str]]
) -> dict[str, pd.DataFrame]:
    """Translation code → :func:`~tokstudy.analyses.parity.parity.text_measures` of its articles,
    indexed by article number; all articles encoded together."""
    keys = [(code, number) for code in sorted(texts) for number in sorted(texts[code])]
    measures = text_measures(tokenizer, [texts[code][number] for code, number in keys])
    measures.index = pd.MultiIndex.from_tuples(keys, names=["code", "article"])
    return {code: measures.xs(code, level="code") for code in sorted(texts) if texts[code]}


def udhr_premiums(
    texts: Mapping[str, Mapping[int, str]],
    reference: str,
    coverage: Mapping[str, Mapping[str, Tokenizer]],
) -> pd.DataFrame:
    """A row per tokenizer label (in ``coverage`` order) and translation it covers (sorted):
    premium over the reference on the common articles, median per-article ratio, bytes and
    characters per token, UNK and byte-fallback rates, share of articles decoded back
    exactly (``roundtrip``), ``articles`` compared and ``missing`` (reference articles the
    translation lacks). ``coverage`` maps a label to the tokenizer of each translation; a
    tokenizer object shared by several translations encodes them in one pass."""
    rows = []
    for label, by_code in coverage.items():
        if reference not in by_code:
            raise TokstudyError(f"UDHR parity: {label!r} does not cover the reference {reference}")
        measures: dict[str, pd.DataFrame] = {}
        for tokenizer in {id(t): t for t in by_code.values()}.values():
            codes = [code for code, t in by_code.items() if t is tokenizer]
            measures |= article_measures(tokenizer, {code: texts[code] for code in codes})
        for code in sorted(by_code):
            premium = language_premium(measures[reference], measures[code])
            rows.append(
                {
                    "tokenizer": label,
                    "language": code,
                    "articles": premium.pop("sentences"),
                    "roundtrip": premium.pop("roundtrip_share"),
                    **premium,
                }
            )
    return pd.DataFrame(rows)


def language_means(table: pd.DataFrame) -> pd.DataFrame:
    """One row per tokenizer and ISO 639-3 code: the mean premium of its varieties
    (``varieties`` of them), keeping the first variety's script."""
    grouped = table.dropna(subset=["premium"]).groupby(["tokenizer", "iso6393"], sort=False)
    return grouped.agg(
        premium=("premium", "mean"), varieties=("language", "size"), script=("script", "first")
    ).reset_index()


def udhr_fairness(table: pd.DataFrame) -> pd.DataFrame:
    """Per tokenizer (table order), over ISO 639-3 languages (varieties averaged, see
    :func:`language_means`): their number, median, 90th percentile and highest premium (with
    its language), the Gini coefficient and the share above each of
    :data:`PREMIUM_THRESHOLDS`."""
    rows = []
    for label, group in language_means(table).groupby("tokenizer", sort=False):
        premiums = group["premium"].to_numpy(dtype=np.float64)
        highest = group.loc[group["premium"].idxmax()]
        row = {
            "tokenizer": label,
            "languages": len(group),
            "median_premium": float(np.median(premiums)),
            "p90_premium": float(np.quantile(premiums, 0.9)),
            "max_premium": float(highest["premium"]),
            "max_language": highest["iso6393"],
            "gini": gini(premiums),
        }
        for threshold in PREMIUM_THRESHOLDS:
            row[f"share_above_{threshold:g}x"] = float((premiums > threshold).mean())
        rows.append(row)
    return pd.DataFrame(rows)


def udhr_scripts(table: pd.DataFrame) -> pd.DataFrame:
    """A row per script (most languages first): its name, the number of ISO 639-3
    languages written in it, and per tokenizer (a column each, table order) the median
    premium of those languages it covers (varieties averaged per language and script)."""
    means = (
        table.dropna(subset=["premium"])
        .groupby(["tokenizer", "script", "iso6393"], sort=False)["premium"]
        .mean()
        .reset_index()
    )
    medians = means.pivot_table(
        index="script", columns="tokenizer", values="premium", aggfunc="median"
    )
    medians = medians.reindex(columns=list(dict.fromkeys(table["tokenizer"])))
    counts = table.groupby("script")["iso6393"].nunique().rename("languages")
    scripts = pd.concat([counts, medians], axis=1).reset_index(names="script")
    scripts.insert(1, "script_name", scripts["script"].map(script_name))
    return scripts.sort_values(["languages", "script"], ascending=[False, True], ignore_index=True)


def most_expensive(table: pd.DataFrame, count: int) -> pd.DataFrame:
    """The ``count`` ISO 639-3 languages with the highest premium per tokenizer (varieties
    averaged), highest first."""
    means = language_means(table)
    return (
        means.sort_values(["tokenizer", "premium"], ascending=[True, False], kind="stable")
        .groupby("tokenizer", sort=False)
        .head(count)
        .reset_index(drop=True)
    )


def describe_translations(
    table: pd.DataFrame, translations: pd.DataFrame, columns: Sequence[str]
) -> pd.DataFrame:
    """``table`` with the ``columns`` of ``translations`` (indexed by code) joined on
    ``language``, inserted after it."""
    joined = table.join(translations[list(columns)], on="language")
    order = ["tokenizer", "language", *columns]
    return joined[order + [c for c in table.columns if c not in order]]


#: the Unicode scripts a FLORES-200 script subtag stands for (others: the subtag itself)
FLORES_SCRIPTS = {"Jpan": {"Hani", "Hira", "Kana"}, "Hans": {"Hani"}, "Hant": {"Hani"}}


def flores_comparison(
    ours: pd.DataFrame, lengths: pd.DataFrame, language_map: pd.DataFrame, column: str
) -> pd.DataFrame:
    """Our UDHR premiums of one tokenizer beside those Petrov et al. (2023) published on
    FLORES-200, per ISO 639-3 code both cover (sorted).

    ``ours``: rows of the UDHR table for that tokenizer (``iso6393``, ``script``,
    ``premium``; varieties averaged per code and script). ``lengths``: their
    ``assets/tokenization_lengths.csv`` (``Language`` and a token count per tokenizer
    ``column`` over all FLORES dev+devtest sentences); ``language_map``: their
    ``flores_language_map.csv`` (``Language``, ``FLORES-200 code`` such as ``arb_Arab``).
    Their premium is the language's count over English's. A row is a code and script both
    have (our dominant script; FLORES ``Jpan``, ``Hans``, ``Hant`` as in
    :data:`FLORES_SCRIPTS`).
    """
    names = language_map.set_index(language_map.columns[0])[language_map.columns[1]].str.strip()
    counts = lengths.set_index("Language")[column]
    theirs = pd.DataFrame({"flores": names.reindex(counts.index), "count": counts}).dropna()
    theirs["premium_flores"] = theirs["count"] / counts["English"]
    theirs["iso6393"] = theirs["flores"].str.split("_").str[0]
    theirs["flores_script"] = theirs["flores"].str.split("_").str[1]
    means = ours.groupby(["iso6393", "script"])["premium"].mean().reset_index()
    joined = means.merge(theirs, on="iso6393")
    fits = [
        script in FLORES_SCRIPTS.get(flores, {flores})
        for script, flores in zip(joined["script"], joined["flores_script"], strict=True)
    ]
    joined = joined[fits].rename(columns={"premium": "premium_udhr"})
    joined["udhr_over_flores"] = joined["premium_udhr"] / joined["premium_flores"]
    columns = ["iso6393", "flores", "script", "premium_udhr", "premium_flores", "udhr_over_flores"]
    return joined[columns].sort_values(["iso6393", "flores"], ignore_index=True)
