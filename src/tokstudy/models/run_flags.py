"""Runs that did not give a score worth correlating: a fine-tune that collapsed to the
majority class, a model that stayed near its unigram baseline (``undertrained``), a causal
LM scored through a tokenizer that does not give more than :data:`LOSSY_TOLERANCE` of the
held-out bytes back (``lossy``).

Each run of the model stage's ``results.tsv`` carries these flags as level-0 rows of its
own (metrics ``collapsed``, ``undertrained``, ``lossy_bytes``); :func:`drop_flagged_runs`
leaves the scores of flagged runs out of the correlation (or keeps them) and says which.
"""

from __future__ import annotations

import pandas as pd

#: rows of ``results.tsv`` that say how a run went, not how good its tokenizer is: left out
#: of the statistics between tokenizers (``seed_summary``, ``wilcoxon``)
RUN_FACTS = frozenset(
    {
        "collapsed",
        "majority_accuracy",
        "undertrained",
        "below_unigram",
        "roundtrip",
        "lossy_bytes",
        "bits_per_byte_low",
        "bits_per_byte_high",
    }
)
#: the share of the held-out bytes a tokenizer may fail to give back before its run is
#: ``lossy`` (0.1 %: the bits it is spared, at most 8 a lost byte, are then at most 0.008
#: bits per byte); lines that do not round-trip are counted in ``roundtrip``, not flagged
LOSSY_TOLERANCE = 0.001
#: a flag: its name and the test on its level-0 value that raises it
FLAGS = {
    "collapsed": ("collapsed", lambda value: value >= 1),
    "undertrained": ("undertrained", lambda value: value >= 1),
    "lossy": ("lossy_bytes", lambda value: value > LOSSY_TOLERANCE),
}


def run_keys(results: pd.DataFrame) -> list[str]:
    """The columns that name one run in ``results.tsv``."""
    keys = ["task", "language", "tokenizer", "vocab_size", "seed"]
    return [*keys[:1], "scale", *keys[1:]] if "scale" in results.columns else keys


def flagged_runs(results: pd.DataFrame) -> pd.DataFrame:
    """One row per flagged run: its keys and ``flags`` (the flags it raised, sorted)."""
    keys = run_keys(results)
    clean = results[results["level"] == 0]
    raised = []
    for flag, (metric, test) in sorted(FLAGS.items()):
        rows = clean[(clean["metric"] == metric) & clean["value"].map(test)]
        raised.append(rows[keys].assign(flag=flag))
    flags = pd.concat(raised, ignore_index=True)
    grouped = flags.groupby(keys, sort=True, dropna=False)["flag"]
    return grouped.agg(lambda names: "+".join(sorted(names))).reset_index(name="flags")


def drop_flagged_runs(results: pd.DataFrame, policy: str, notes: list[str]) -> pd.DataFrame:
    """``results`` without the rows of flagged runs (``policy`` ``exclude``) or whole
    (``keep``); a note names every flagged run either way."""
    flagged = flagged_runs(results)
    if flagged.empty:
        return results
    keys = run_keys(results)
    names = "; ".join(
        " ".join(str(value) for value in row if str(value) not in ("", "nan"))
        for row in flagged[[*keys, "flags"]].itertuples(index=False)
    )
    if policy == "keep":
        notes.append(
            f"{len(flagged)} flagged run(s) kept (analyses.correlation.flagged_runs: keep): {names}"
        )
        return results
    notes.append(
        f"{len(flagged)} run(s) left out: a collapsed, undertrained or lossy run's score says "
        f"nothing about its tokenizer (analyses.correlation.flagged_runs: keep keeps them): "
        f"{names}"
    )
    marked = results.merge(flagged[keys], on=keys, how="left", indicator=True)
    return results[(marked["_merge"] == "left_only").to_numpy()]


def mark_flagged(summary: pd.DataFrame, flagged: pd.DataFrame) -> pd.DataFrame:
    """``summary`` (one row per group of runs over seeds) with ``flagged_seeds``: how many
    of the group's seeds ran flagged, and ``flags``, which flags they raised."""
    keys = [key for key in run_keys(flagged) if key != "seed" and key in summary.columns]
    counts = flagged.groupby(keys, sort=True, dropna=False).agg(
        flagged_seeds=("seed", "nunique"),
        flags=("flags", lambda names: "+".join(sorted(set("+".join(names).split("+"))))),
    )
    marked = summary.merge(counts.reset_index(), on=keys, how="left")
    return marked.assign(
        flagged_seeds=marked["flagged_seeds"].fillna(0).astype(int),
        flags=marked["flags"].fillna(""),
    )
