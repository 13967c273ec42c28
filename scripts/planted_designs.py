"""Planted designs through the correlation analysis's own statistics (issue 53): how often
a null is called, how often an interval covers the planted association, and the power to
find one, with the tokenizer as the unit of inference.

A design is languages × vocabulary sizes × tokenizers in families × seeds. Each scenario
draws every tokenizer's lasting offsets on the metric and on the score (what a tokenizer
is, whatever the cell), then each cell's own deviations and each seed's:

- ``tokenizer_null``: the offsets unrelated; a size trend on both (different per
  language). Nothing is associated at any level.
- ``family_interaction``: metric and score share a family × language effect (families
  differ, differently in each language) and a size effect that is not linear in log size
  and differs by language; within a family, tokenizers' metric and score are unrelated.
  A within-family null.
- ``association``: the tokenizers' offsets correlated (``--r``); no family effects. The
  true within-size Spearman is ``(6/π)·arcsin(ρ/2)``, ``ρ`` the Pearson correlation of
  metric and mean score within a stratum that the variances give (a normal pair).

``--left-out K`` leaves out the scores of the first family's first ``K`` tokenizers at the
largest size in the last language (their metrics kept), as flagged runs are left out.

A row is *called* when its interval excludes 0 and its p is below 0.05.

    python scripts/planted_designs.py [--datasets 200] [--design zoo|families_3x9|…]
        [--scenario tokenizer_null|family_interaction|association] [--r 0.6]
        [--bootstrap-samples 400] [--permutations 2000] [--seed 0]
        [--levels cell,within_family] [--cell-sd 0.5] [--seeds N] [--languages en]
        [--left-out K]
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from tokstudy.analyses.correlation.run import called  # noqa: E402
from tokstudy.analyses.correlation.settings import CorrelationSettings  # noqa: E402
from tokstudy.analyses.correlation.table import SIGNIFICANCE, correlation_table  # noqa: E402

#: standard deviations: a tokenizer's lasting offset, a family's, a cell's own deviation
#: (metric and score), a seed's deviation of the score
TOKENIZER_SD, FAMILY_SD, CELL_SD, SEED_SD = 1.0, 1.0, 0.5, 0.3


@dataclass(frozen=True)
class Design:
    """Languages × sizes × tokenizers (``families``: how many tokenizers each family has)
    × seeds."""

    languages: tuple[str, ...]
    sizes: tuple[int, ...]
    families: tuple[int, ...]
    seeds: int

    def tokenizers(self) -> list[tuple[str, str]]:
        """(tokenizer, family) for every tokenizer of the design."""
        return [
            (f"f{family}t{index}", f"f{family}")
            for family, count in enumerate(self.families)
            for index in range(count)
        ]


#: the zoo study's design (config/predictive_zoo.yaml): 11 tokenizers in 6 families
ZOO = Design(("en", "fi", "mr"), (1000, 2000, 4000), (5, 2, 1, 1, 1, 1), 3)
#: candidate variant designs: ``k`` tokenizers in each of 3 families, the zoo's languages,
#: sizes and seeds
DESIGNS = {
    "zoo": ZOO,
    **{
        f"families_3x{k}": Design(ZOO.languages, ZOO.sizes, (k, k, k), ZOO.seeds)
        for k in (6, 8, 9, 10)
    },
}
SCENARIOS = ("tokenizer_null", "family_interaction", "association")


def planted_cells(
    design: Design,
    scenario: str,
    rng: np.random.Generator,
    r: float = 0.0,
    cell_sd: float = CELL_SD,
    left_out: int = 0,
) -> pd.DataFrame:
    """One planted cells table (one row per cell and seed): ``metric`` and ``score``;
    ``cell_sd``: the standard deviation of a cell's own deviations; ``left_out``: the first
    family's first tokenizers whose score at the largest size in the last language is
    left out (empty)."""
    tokenizers = design.tokenizers()
    families = sorted({family for _, family in tokenizers})
    lasting = rng.multivariate_normal([0, 0], [[1, r], [r, 1]], len(tokenizers)) * TOKENIZER_SD
    if scenario != "association":
        lasting[:, 1] = rng.normal(scale=TOKENIZER_SD, size=len(tokenizers))
    family_effects = {
        (family, language): rng.normal(scale=FAMILY_SD, size=2)
        for family in families
        for language in design.languages
    }
    slopes = {language: rng.normal(size=2) for language in design.languages}
    rows = []
    for language in design.languages:
        for size in design.sizes:
            trend = slopes[language] * np.log(size)
            if scenario == "family_interaction":
                trend = trend + slopes[language][0] * np.log(size) ** 2 / 4
            for (tokenizer, family), (metric_offset, score_offset) in zip(
                tokenizers, lasting, strict=True
            ):
                metric = metric_offset + trend[0] + rng.normal(scale=cell_sd)
                score = score_offset + trend[1] + rng.normal(scale=cell_sd)
                if scenario == "family_interaction":
                    shared = family_effects[family, language][0]
                    metric += shared
                    score += shared
                for seed in range(design.seeds):
                    rows.append(
                        (language, tokenizer, family, size, seed, metric,
                         score + rng.normal(scale=SEED_SD))
                    )  # fmt: skip
    columns = ["language", "tokenizer", "family", "vocab_size", "seed", "metric", "score"]
    cells = pd.DataFrame(rows, columns=columns)
    blanked = (
        (cells["language"] == design.languages[-1])
        & (cells["vocab_size"] == max(design.sizes))
        & cells["tokenizer"].isin([name for name, _ in tokenizers[:left_out]])
    )
    return cells.assign(score=cells["score"].mask(blanked))


def true_within_size_spearman(r: float, seeds: int, cell_sd: float = CELL_SD) -> float:
    """The ``association`` scenario's within-size Spearman in the population: metric and
    mean score are a normal pair within a stratum."""
    metric_var = TOKENIZER_SD**2 + cell_sd**2
    score_var = TOKENIZER_SD**2 + cell_sd**2 + SEED_SD**2 / seeds
    pearson = r * TOKENIZER_SD**2 / math.sqrt(metric_var * score_var)
    return 6 / math.pi * math.asin(pearson / 2)


def rates(
    design: Design,
    scenario: str,
    datasets: int,
    settings: CorrelationSettings,
    r: float = 0.0,
    seed: int = 0,
    levels: tuple[str, ...] = ("cell", "within_family"),
    cell_sd: float = CELL_SD,
    left_out: int = 0,
) -> pd.DataFrame:
    """Per level, over ``datasets`` planted tables (pooled scope): the share of rows
    called, of intervals covering the true value (``association`` only) and of p < 0.05."""
    rng = np.random.default_rng(seed)
    association = scenario == "association"
    truth = true_within_size_spearman(r, design.seeds, cell_sd) if association else 0.0
    found = {level: [] for level in levels}
    for _ in range(datasets):
        cells = planted_cells(design, scenario, rng, r, cell_sd, left_out)
        for level in levels:
            table = correlation_table(cells, ["score"], settings, level, pooled_only=True)
            row = table.assign(called=called(table)).iloc[0]
            found[level].append(
                (
                    bool(row["called"]),
                    row["partial_low"] <= truth <= row["partial_high"],
                    row["p_within_size"] < SIGNIFICANCE,
                )
            )
    return pd.DataFrame(
        [
            {
                "level": level,
                "datasets": datasets,
                "called": np.mean([c for c, _, _ in found[level]]),
                "covered": np.mean([c for _, c, _ in found[level]]),
                "p_below_0.05": np.mean([p for _, _, p in found[level]]),
                "truth": truth,
            }
            for level in levels
        ]
    )


def main() -> int:
    """Print the rates of one scenario on one design."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200, help="planted tables")
    parser.add_argument("--design", choices=sorted(DESIGNS), default="zoo")
    parser.add_argument("--scenario", choices=SCENARIOS, default="tokenizer_null")
    parser.add_argument("--r", type=float, default=0.6, help="association: offsets' correlation")
    parser.add_argument("--bootstrap-samples", type=int, default=400, help="per interval")
    parser.add_argument("--permutations", type=int, default=2000, help="per test")
    parser.add_argument("--seed", type=int, default=0, help="of the planted tables")
    parser.add_argument(
        "--levels", default="cell,within_family", help="comma-separated: cell, within_family"
    )
    parser.add_argument(
        "--cell-sd", type=float, default=CELL_SD, help="a cell's own deviations (offsets: 1)"
    )
    parser.add_argument("--seeds", type=int, help="models per cell (default: the design's)")
    parser.add_argument(
        "--languages", help="comma-separated: a piece of the design's languages (default: all)"
    )
    parser.add_argument(
        "--left-out",
        type=int,
        default=0,
        help="the first family's first K tokenizers: no score at the largest size, last language",
    )
    args = parser.parse_args()
    if not 0 <= args.left_out <= DESIGNS[args.design].families[0]:
        parser.error(f"--left-out: 0 to {DESIGNS[args.design].families[0]} (the first family)")
    settings = CorrelationSettings(
        bootstrap_samples=args.bootstrap_samples, permutations=args.permutations
    )
    levels = tuple(args.levels.split(","))
    design = DESIGNS[args.design]
    if args.seeds is not None:
        design = replace(design, seeds=args.seeds)
    if args.languages:
        languages = tuple(args.languages.split(","))
        unknown = sorted(set(languages) - set(design.languages))
        if unknown:
            parser.error(f"--languages: {', '.join(unknown)} not in {design.languages}")
        design = replace(design, languages=languages)
    table = rates(
        design,
        args.scenario,
        args.datasets,
        settings,
        args.r,
        args.seed,
        levels,
        args.cell_sd,
        args.left_out,
    )
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
