"""The ``tokstudy`` command line: metrics of any saved tokenizer on any corpus.

A corpus is read and cleaned exactly as the workflow's ``prepare_corpus`` does (line
endings, byte-order mark, whitespace, empty lines, long lines; invalid UTF-8 and NUL bytes
are an error naming the file and line), so the numbers are the workflow's.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

# Nothing heavy is imported here: ``tokstudy --help`` stays fast (each command imports its
# own modules; docs/benchmarks.md, "Start-up of the command line").
from tokstudy.errors import TokstudyError, one_line

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

    from tokstudy.tokenizers.base import Tokenizer

#: the workflow's config schema, shipped inside the package (``pip install .`` carries it)
DEFAULT_SCHEMA = Path(str(resources.files("tokstudy.workflow").joinpath("config.schema.yaml")))


class _ShownInHelp:
    """A value of a help text computed only when the help is shown (argparse fills a help's
    ``%(name)s`` from the action's attributes then): what it needs is imported only for
    ``--help``."""

    def __init__(self, value: Callable[[], object]) -> None:
        self.value = value

    def __str__(self) -> str:
        return str(self.value())


def _metric_names() -> str:
    from tokstudy.metrics.compute import METRICS

    return ", ".join(METRICS)


def _max_line_bytes() -> int:
    from tokstudy.corpora.prepare import MAX_LINE_BYTES

    return MAX_LINE_BYTES


def _normal_forms() -> tuple[str, ...]:
    from tokstudy.corpora.prepare import NORMAL_FORMS

    return NORMAL_FORMS


def _normal_form(value: str) -> str:
    """``--normalize``'s value, checked (argparse's error names the option)."""
    if value not in _normal_forms():
        raise argparse.ArgumentTypeError(
            f"invalid choice: {value!r} (choose from {', '.join(_normal_forms())})"
        )
    return value


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
        help="UTF-8 text, one sentence per line, cleaned as the workflow cleans a corpus "
        "(repeat for several corpora)",
    )
    metrics.add_argument(
        "--on-invalid-utf8",
        choices=["error", "replace"],
        default="error",
        help="invalid UTF-8 or NUL bytes: stop naming file and line, or replace by U+FFFD",
    )
    normal_form = metrics.add_argument(
        "--normalize",
        type=_normal_form,
        default="none",
        help="Unicode normal form of every line, one of %(forms)s, as "
        "corpus_defaults.normalize does (default: none); a study with nfkc is reproduced "
        "with --normalize nfkc",
    )
    normal_form.forms = _ShownInHelp(lambda: ", ".join(_normal_forms()))
    longest = metrics.add_argument(
        "--max-line-bytes",
        type=int,
        help="split longer lines at whitespace, as corpus_defaults.max_line_bytes does "
        "(default: %(limit)s)",
    )
    longest.limit = _ShownInHelp(_max_line_bytes)
    metric = metrics.add_argument(
        "--metric", action="append", help="metric to report (default: all of %(names)s)"
    )
    metric.names = _ShownInHelp(_metric_names)
    metrics.add_argument("--output", type=Path, help="write the tidy table to this CSV file")
    metrics.add_argument("--batch-lines", type=int, default=2048, help="lines encoded per batch")
    check = commands.add_parser(
        "check-config",
        help="check study config files as the workflow does at start; malformed YAML and "
        "duplicated keys name the file and line (Snakemake's own message names neither)",
    )
    check.add_argument("configfile", type=Path, nargs="+", help="study config (YAML or JSON)")
    check.add_argument(
        "--schema",
        type=Path,
        default=DEFAULT_SCHEMA,
        help=f"config schema (default: {DEFAULT_SCHEMA})",
    )
    serve = commands.add_parser(
        "serve",
        help="a live playground: the study's tokenizers segment any typed text side by side",
    )
    serve.add_argument("results", type=Path, help="the study's results folder")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0: any free)")
    _add_correlate_parser(commands)
    status = commands.add_parser(
        "status",
        help="where a run of a study stands: jobs done, running, failed and left per stage, "
        "and each running job's last log line (its progress)",
    )
    status.add_argument(
        "results",
        type=Path,
        nargs="?",
        default=Path("results"),
        help="the study's results folder (default: results)",
    )
    status.add_argument(
        "--directory",
        type=Path,
        help="the folder snakemake runs in (default: the one the run's lock names, else .)",
    )
    return parser


def _add_correlate_parser(commands: argparse._SubParsersAction) -> None:
    correlate = commands.add_parser(
        "correlate",
        help="size-controlled correlation of intrinsic metrics with downstream scores over a "
        "table of cells (docs/statistics.md)",
    )
    correlate.add_argument(
        "cells",
        type=Path,
        help="CSV with language, tokenizer, vocab_size, seed and numeric columns, one row per "
        "cell and seed (empty = missing)",
    )
    correlate.add_argument(
        "--scores",
        required=True,
        help="comma-separated downstream score columns (repeats ignored); the other numeric "
        "columns are the intrinsic metrics (see --metrics, --exclude)",
    )
    correlate.add_argument(
        "--metrics",
        help="comma-separated intrinsic metric columns to use (default: every other numeric "
        "column but the counts lines, words, tokens, vocab_size)",
    )
    correlate.add_argument(
        "--exclude", help="comma-separated columns to leave out of the intrinsic metrics"
    )
    correlate.add_argument(
        "--out", type=Path, default=Path("."), help="folder for the tables (default: .)"
    )
    correlate.add_argument(
        "--bootstrap-samples",
        type=int,
        default=1000,
        help="bootstrap resamples (over cells and seeds) of each confidence interval "
        "(default: 1000)",
    )
    correlate.add_argument(
        "--permutations",
        type=int,
        default=20000,
        help="exact within-size test up to this many orderings, else this many random ones",
    )
    correlate.add_argument(
        "--primary",
        default="",
        help="the intrinsic column declared before the analysis: listed first, its p "
        "Holm-adjusted alone (the others among themselves)",
    )
    correlate.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="level of the bootstrap confidence intervals, between 0 and 1 (default: 0.95)",
    )
    correlate.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the bootstrap and of the random orderings (default: 0)",
    )


def _names(value: str | None) -> tuple[str, ...]:
    """A comma-separated list of column names, blanks and repeats dropped, in order."""
    return tuple(dict.fromkeys(n.strip() for n in (value or "").split(",") if n.strip()))


def correlate_command(args: argparse.Namespace) -> None:
    """Run ``tokstudy correlate`` and say where the tables are (skipped columns noted on
    stderr)."""
    from tokstudy.analyses.correlation.cells import ColumnChoice
    from tokstudy.analyses.correlation.run import OUTPUT_FILES, SUMMARY_FILE, correlate_file
    from tokstudy.analyses.correlation.settings import CorrelationSettings

    for flag, value, least in (
        ("--bootstrap-samples", args.bootstrap_samples, 1),
        ("--permutations", args.permutations, 1),
        ("--seed", args.seed, 0),
    ):
        if value < least:
            raise TokstudyError(f"{flag} must be at least {least}, got {value}")
    if not 0 < args.confidence < 1:
        raise TokstudyError(f"--confidence must be between 0 and 1, got {args.confidence}")
    from tokstudy.files.output_paths import check_not_an_input, check_output_folder

    check_output_folder(args.out, [args.cells], "--out")
    for name in (*OUTPUT_FILES.values(), SUMMARY_FILE):
        check_not_an_input(args.out / name, [args.cells], "--out")
    settings = CorrelationSettings(
        bootstrap_samples=args.bootstrap_samples,
        permutations=args.permutations,
        confidence=args.confidence,
        seed=args.seed,
        primary=args.primary,
    )
    choice = ColumnChoice(_names(args.metrics), _names(args.exclude))
    result = correlate_file(args.cells, list(_names(args.scores)), args.out, settings, choice)
    for note in choice.notes():
        print(f"tokstudy: note: {note}", file=sys.stderr)
    print(result.ranking.drop(columns="score_note").to_string(index=False))
    print(f"wrote {', '.join([*OUTPUT_FILES.values(), SUMMARY_FILE])} into {args.out}")


def _load_tokenizer(path: Path) -> Tokenizer:
    """The tokenizer at ``path``; a missing or unreadable one is a one-line error naming it."""
    from tokstudy.tokenizers.external import load_any
    from tokstudy.tokenizers.registry import META_FILE

    if path.is_dir() and not any((path / name).is_file() for name in (META_FILE, "tokenizer.json")):
        raise TokstudyError(
            f"--tokenizer {path}: a directory without a tokenizer (no {META_FILE} or "
            "tokenizer.json in it)"
        )
    try:
        return load_any(path)
    except TokstudyError:
        raise
    except Exception as exc:  # a corrupt file fails inside json, sentencepiece, tokenizers…
        raise TokstudyError(f"--tokenizer {path}: cannot be loaded ({one_line(exc)})") from exc


def _kind(path: Path) -> str:
    """``pretrained`` for a pretrained tokenizer file (or folder, or one the workflow
    imported: its ``meta.json`` says so), else ``trained``."""
    from tokstudy.tokenizers.cells import PRETRAINED
    from tokstudy.tokenizers.directory import read_meta
    from tokstudy.tokenizers.registry import META_FILE

    if path.is_dir() and (path / META_FILE).is_file():
        return read_meta(path).get("kind", "trained")
    return PRETRAINED


def cleaned_corpus(
    corpus: Path, folder: Path, on_invalid_utf8: str, max_line_bytes: int, normalize: str = "none"
) -> Path:
    """``corpus`` cleaned as ``prepare_corpus`` cleans it (the same function: decoding,
    normal form ``normalize``, long lines), written into ``folder``.

    What cleaning changed is reported on stderr; no line left is an error.
    """
    from tokstudy.corpora.prepare import clean_corpus_file, cleaning_changes

    path = folder / "corpus.txt"
    stats = clean_corpus_file(
        corpus,
        path,
        f"--corpus {corpus}",
        on_invalid_utf8,
        max_line_bytes,
        normalize,
        replace_hint="run with --on-invalid-utf8 replace to substitute U+FFFD",
    )
    changes = cleaning_changes(stats)
    if changes:
        counts = ", ".join(f"{key} {value}" for key, value in changes.items())
        print(f"tokstudy: note: --corpus {corpus}: {counts}", file=sys.stderr)
    return path


def metrics_command(args: argparse.Namespace) -> pd.DataFrame:
    """Compute the metrics table the ``metrics`` subcommand prints."""
    import tempfile

    import pandas as pd

    from tokstudy.corpora.prepare import check_corpus_file
    from tokstudy.files.output_paths import check_output_file
    from tokstudy.metrics.compute import METRICS, check_metric_names, compute_metrics
    from tokstudy.report.tables import tidy_rows

    selected = args.metric or list(METRICS)
    check_metric_names(selected)
    if args.max_line_bytes is None:
        args.max_line_bytes = _max_line_bytes()
    for option, value, least in (
        ("--batch-lines", args.batch_lines, 1),
        ("--max-line-bytes", args.max_line_bytes, 64),
    ):
        if value < least:
            raise TokstudyError(f"{option} must be at least {least}, got {value}")
    for corpus in args.corpus:
        check_corpus_file(corpus, f"--corpus {corpus}")
    if args.output is not None:
        check_output_file(args.output, [args.tokenizer, *args.corpus], "--output")
    tokenizer = _load_tokenizer(args.tokenizer)
    frames = []
    for corpus in args.corpus:
        with tempfile.TemporaryDirectory(prefix="tokstudy-") as folder:
            clean = cleaned_corpus(
                corpus, Path(folder), args.on_invalid_utf8, args.max_line_bytes, args.normalize
            )
            metrics, _ = compute_metrics(tokenizer, clean, args.batch_lines)
        chosen = {name: metrics[name] for name in selected}
        size, kind = len(tokenizer.vocab), _kind(args.tokenizer)
        frames.append(tidy_rows("-", str(args.tokenizer), size, str(corpus), chosen, kind))
    return pd.concat(frames, ignore_index=True).rename(columns={"split": "corpus"})


def check_config_command(args: argparse.Namespace) -> None:
    """Load the config files strictly, merge them as ``--configfile`` does, validate the
    result against the schema and resolve it as the workflow does (files, names, keys);
    then say whether this machine's RAM and disk fit the study (an estimate:
    :mod:`tokstudy.workflow.footprint`)."""
    from tokstudy.workflow.config_files import (
        check_schema,
        load_config_file,
        merged_config_files,
    )
    from tokstudy.workflow.footprint import fit_report
    from tokstudy.workflow.plan import plan_study

    config = merged_config_files(args.configfile)
    check_schema(config, load_config_file(args.schema))
    plan = plan_study(config)
    print(f"{', '.join(map(str, args.configfile))}: ok")
    print("\n".join(fit_report(plan)))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tokstudy`` command."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "check-config":
            check_config_command(args)
            return 0
        if args.command == "serve":
            from tokstudy.report.page.serve import serve

            serve(args.results, args.host, args.port)
            return 0
        if args.command == "correlate":
            correlate_command(args)
            return 0
        if args.command == "status":
            from tokstudy.workflow.status import status_report

            print(status_report(args.results, args.directory))
            return 0
        table = metrics_command(args)
    except TokstudyError as exc:
        print(f"tokstudy: error: {exc}", file=sys.stderr)
        return 1
    if args.output:
        from tokstudy.files.output_paths import atomic_output

        with atomic_output(args.output) as staged:
            table.to_csv(staged, index=False)
    print(table.drop(columns=["language"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
