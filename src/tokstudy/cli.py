"""The ``tokstudy`` command line: metrics of any saved tokenizer on any corpus."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from tokstudy.errors import TokstudyError
from tokstudy.metrics import METRICS, check_metric_names, compute_metrics
from tokstudy.report.tables import tidy_rows
from tokstudy.tokenizers.external import load_any


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tokstudy", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    metrics = commands.add_parser(
        "metrics", help="intrinsic metrics of a saved tokenizer on one or more corpora"
    )
    metrics.add_argument(
        "--tokenizer",
        required=True,
        type=Path,
        help="tokstudy tokenizer directory, HF tokenizer.json or SentencePiece .model",
    )
    metrics.add_argument(
        "--corpus",
        required=True,
        type=Path,
        action="append",
        help="UTF-8 text, one sentence per line (repeat for several corpora)",
    )
    metrics.add_argument(
        "--metric", action="append", help=f"metric to report (default: all of {', '.join(METRICS)})"
    )
    metrics.add_argument("--output", type=Path, help="write the tidy table to this CSV file")
    metrics.add_argument("--batch-lines", type=int, default=2048, help="lines encoded per batch")
    return parser


def metrics_command(args: argparse.Namespace) -> pd.DataFrame:
    """Compute the metrics table the ``metrics`` subcommand prints."""
    selected = args.metric or list(METRICS)
    check_metric_names(selected)
    tokenizer = load_any(args.tokenizer)
    frames = []
    for corpus in args.corpus:
        if not corpus.is_file():
            raise TokstudyError(f"--corpus {corpus}: no such file")
        metrics, _ = compute_metrics(tokenizer, corpus, args.batch_lines)
        chosen = {name: metrics[name] for name in selected}
        frames.append(
            tidy_rows("-", str(args.tokenizer), len(tokenizer.vocab), str(corpus), chosen)
        )
    return pd.concat(frames, ignore_index=True).rename(columns={"split": "corpus"})


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tokstudy`` command."""
    args = _parser().parse_args(argv)
    try:
        table = metrics_command(args)
    except TokstudyError as exc:
        print(f"tokstudy: error: {exc}", file=sys.stderr)
        return 1
    if args.output:
        table.to_csv(args.output, index=False)
    print(table.drop(columns=["language"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
