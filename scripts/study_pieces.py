"""Run a long study in pieces on machines that do not last, and pool them
(:mod:`tokstudy.analyses.correlation.pieces`).

A piece is the study's config narrowed to some languages and seeds (``languages``,
``models.languages``, ``models.seeds``) with its own ``results_dir``; write it, run it with
``snakemake --cores 2 --configfile PIECE.yaml``, then keep its tables:

    python scripts/study_pieces.py narrow --configfile config/predictive_variants.yaml \
        --languages en --seeds 0 --results-dir results/variants_en0 --out en0.yaml
    python scripts/study_pieces.py export RESULTS_DIR --configfile PIECE.yaml \
        --out docs/data/X/en_seed0 [--ran-at COMMIT] [--describe TEXT]
    python scripts/study_pieces.py pool --configfile config/predictive_variants.yaml \
        --out DIR docs/data/X/en_seed0 docs/data/X/fi_seed0 ...

``pool`` writes the workflow's correlation tables (``correlation*.{csv,md,png}``) of the
union of the pieces into ``--out``, after checking that every piece ran this study and
that no run is in two pieces.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

import yaml  # noqa: E402

from tokstudy.analyses.correlation.pieces import (  # noqa: E402
    export_piece,
    narrowed_config,
    pool_pieces,
)
from tokstudy.analyses.correlation.settings import CorrelationSettings  # noqa: E402
from tokstudy.errors import TokstudyError  # noqa: E402
from tokstudy.workflow.config_files import merged_config_files  # noqa: E402
from tokstudy.workflow.plan import plan_study  # noqa: E402


def _commit() -> str:
    run = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return run.stdout.strip() if run.returncode == 0 else "unknown"


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _log_span(results_dir: Path) -> dict[str, str]:
    """When the piece's first and last rule logs were written (its run's span)."""
    times = [path.stat().st_mtime for path in (results_dir / "logs").rglob("*.log")]
    if not times:
        return {}
    return {"first_log": _utc(min(times)), "last_log": _utc(max(times))}


def _utc(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).isoformat(timespec="seconds")


def narrow_command(args: argparse.Namespace) -> None:
    study = merged_config_files(args.configfile)
    config = narrowed_config(study, args.languages, args.seeds, args.results_dir, Path.cwd())
    plan_study(config)  # what the piece's run would refuse, refused now
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    print(f"wrote {args.out}: snakemake --cores 2 --configfile {args.out}")


def export_command(args: argparse.Namespace) -> None:
    config = merged_config_files(args.configfile)
    facts = {
        "exported_with_commit": _commit(),
        "ran_at_commit": args.ran_at or "not given",
        "configfiles": [str(path) for path in args.configfile],
        "exported_at": _utc(datetime.datetime.now(datetime.UTC).timestamp()),
        "cpu": _cpu(),
        "describe": args.describe,
        **_log_span(args.results_dir),
    }
    export_piece(args.results_dir, config, args.out, facts)
    print(f"exported {args.results_dir} into {args.out}")


def pool_command(args: argparse.Namespace) -> None:
    config = merged_config_files(args.configfile)
    plan = plan_study(config)
    correlation = plan.analyses["correlation"]
    settings = CorrelationSettings(**correlation.resampling())
    result = pool_pieces(
        args.pieces,
        config,
        plan.metrics.names,
        settings,
        plan.tokenizers.families(),
        args.out,
    )
    print(result.ranking.drop(columns="score_note").to_string(index=False))
    print(f"pooled {len(args.pieces)} piece(s) into {args.out}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    narrow = commands.add_parser("narrow", help="write the config of one piece")
    narrow.add_argument("--configfile", type=Path, nargs="+", required=True)
    narrow.add_argument("--languages", nargs="+", required=True)
    narrow.add_argument("--seeds", type=int, nargs="+", required=True)
    narrow.add_argument("--results-dir", required=True)
    narrow.add_argument("--out", type=Path, required=True)
    narrow.set_defaults(run=narrow_command)
    export = commands.add_parser("export", help="keep a finished piece's tables")
    export.add_argument("results_dir", type=Path)
    export.add_argument("--configfile", type=Path, nargs="+", required=True)
    export.add_argument("--out", type=Path, required=True)
    export.add_argument("--describe", default="", help="what the piece is, where it ran")
    export.add_argument("--ran-at", help="the commit of the code the piece ran")
    export.set_defaults(run=export_command)
    pool = commands.add_parser("pool", help="the correlation tables of the pooled pieces")
    pool.add_argument("pieces", type=Path, nargs="+")
    pool.add_argument("--configfile", type=Path, nargs="+", required=True)
    pool.add_argument("--out", type=Path, required=True)
    pool.set_defaults(run=pool_command)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.run(args)
    except TokstudyError as exc:
        print(f"study_pieces: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
