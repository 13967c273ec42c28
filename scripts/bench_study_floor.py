"""A whole study's wall time against its CPU floor, from scratch, with and without a cost
table of an earlier run to order the cell jobs.

Each run writes the study into a fresh folder ``OUT/run<i>-<kind>`` (``results_dir`` of a
copy of the config): ``estimates`` runs order the cells by the tokenizer/size estimates
(no cost table), ``table`` runs by the cost table of the first ``estimates`` run (config
key ``cell_costs``) or by ``--cost-table``. Runs alternate in the order given. Per run it
prints the wall time of ``snakemake --cores N`` and the floor: the CPU seconds of the
cells' ``train`` and ``metrics`` phases in the run's own ``tables/cost.csv``, divided by
the cores; and whether its ``tables/metrics.csv`` is byte-identical to the first run's
(or to ``--metrics``). With ``--noop``, it then times a rerun of the last run's folder
(nothing to do).

    python scripts/bench_study_floor.py config/hft2022.yaml --cores 2 \
        --runs estimates table --out /tmp/floor --noop
"""

from __future__ import annotations

import argparse
import filecmp
import subprocess
import time
from pathlib import Path

import pandas as pd
import yaml

from tokstudy.workflow.cell_priority import PHASES


def floor_seconds(cost_table: Path, cores: int) -> float:
    """The CPU floor of a study: its cells' train and metrics CPU seconds ÷ cores."""
    table = pd.read_csv(cost_table, dtype={"size": str})
    return float(table.loc[table["step"].isin(PHASES), "cpu_seconds"].sum()) / cores


def study_config(config: Path, results: Path, cost_table: Path | None, folder: Path) -> Path:
    """A copy of ``config`` writing into ``results``, ordered by ``cost_table`` if given."""
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    settings["results_dir"] = str(results)
    settings["cell_costs"] = str(cost_table) if cost_table else None
    path = folder / f"{results.name}.yaml"
    path.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    return path


def snakemake(config: Path, cores: int, log: Path) -> float:
    """Wall seconds of ``snakemake --cores N --configfile config`` (its output in ``log``)."""
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as handle:
        done = subprocess.run(
            ["snakemake", "--cores", str(cores), "--configfile", str(config)],
            stdout=handle,
            stderr=subprocess.STDOUT,
            check=False,
        )
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"snakemake failed (exit {done.returncode}): see {log}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--runs", nargs="+", choices=["estimates", "table"], required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--noop", action="store_true")
    parser.add_argument(
        "--cost-table", type=Path, help="the 'table' runs' cost table (default: run 0's)"
    )
    parser.add_argument(
        "--metrics", type=Path, help="the metrics.csv every run must equal (default: run 0's)"
    )
    args = parser.parse_args()
    if args.runs[0] != "estimates" and args.cost_table is None:
        parser.error("without --cost-table the first run must be 'estimates' (its table)")
    args.out.mkdir(parents=True, exist_ok=True)
    first_table, first_metrics = args.cost_table, args.metrics
    for index, kind in enumerate(args.runs):
        results = (args.out / f"run{index}-{kind}").resolve()
        config = study_config(args.config, results, first_table if kind == "table" else None,
                              args.out)  # fmt: skip
        wall = snakemake(config, args.cores, args.out / f"run{index}-{kind}.log")
        floor = floor_seconds(results / "tables/cost.csv", args.cores)
        metrics = results / "tables/metrics.csv"
        if first_table is None:
            first_table = args.out / "cost-of-run0.csv"
            first_table.write_bytes((results / "tables/cost.csv").read_bytes())
        first_metrics = first_metrics or metrics
        same = filecmp.cmp(metrics, first_metrics, shallow=False)
        print(
            f"run {index} ({kind}): wall {wall:.0f} s, floor {floor:.0f} s, "
            f"ratio {wall / floor:.3f}; metrics.csv identical to {first_metrics}: {same}",
            flush=True,
        )
    if args.noop:
        wall = snakemake(config, args.cores, args.out / "noop.log")
        print(f"no-op rerun of run {len(args.runs) - 1}: wall {wall:.1f} s")


if __name__ == "__main__":
    main()
