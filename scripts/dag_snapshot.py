"""Print every job of a study's forced dry run, one JSON line each, sorted.

    python scripts/dag_snapshot.py config/hft2022.yaml > before.jsonl

Run from the repository root (the study's relative paths are read from there). A job is
its rule, wildcards, inputs, outputs, params, log, threads, priority and resources (named
lists keep their names), so two snapshots differ exactly where the DAG does: ``diff before after``
checks that a refactoring left the DAG alone. A refactoring that moves code changes the
parameters that record it (``step``, ``code``, ``training_code``: the step a rule runs and
its fingerprints); ``--without-code`` blanks those, so the diff shows the rest:

    python scripts/dag_snapshot.py --without-code config/hft2022.yaml > after.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from snakemake.api import SnakemakeApi
from snakemake.settings.types import (
    ConfigSettings,
    DAGSettings,
    OutputSettings,
    Quietness,
    ResourceSettings,
)


def named(values: Any) -> dict[str, Any]:
    """A Snakemake named list: its items in order and the names of its items or slices."""
    items = [value if isinstance(value, str | int | float) else str(value) for value in values]
    names = {name: list(span) for name, span in sorted(values._names.items())}
    return {"items": items, "names": names}


#: the parameters that record a job's code rather than its work
CODE_PARAMS = ("step", "code", "training_code")


def without_code(params: dict[str, Any]) -> dict[str, Any]:
    """A job's named parameters with those of :data:`CODE_PARAMS` blanked."""
    blanked = {params["names"][name][0] for name in CODE_PARAMS if name in params["names"]}
    items = ["(code)" if index in blanked else item for index, item in enumerate(params["items"])]
    return {"items": items, "names": params["names"]}


def job_record(job: Any, code: bool = True) -> dict[str, Any]:
    """What the DAG invariant compares of one job (its code parameters blanked unless
    ``code``)."""
    params = named(job.params)
    return {
        "rule": job.rule.name,
        "wildcards": dict(sorted(job.wildcards_dict.items())),
        "input": named(job.input),
        "output": named(job.output),
        "params": params if code else without_code(params),
        "log": named(job.log),
        "threads": job.threads,
        "priority": job.priority,
        "resources": {key: str(value) for key, value in sorted(job.resources.items())},
    }


def snapshot(configfile: Path, snakefile: Path, code: bool = True) -> list[str]:
    """The sorted JSON lines of every job of a forced dry run of one config."""
    output = OutputSettings(quiet={Quietness.ALL})
    with SnakemakeApi(output) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=2),
            config_settings=ConfigSettings(configfiles=[configfile]),
            snakefile=snakefile,
        )
        dag_api = workflow_api.dag(dag_settings=DAGSettings(forceall=True))
        workflow = dag_api.workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        workflow.dag.update_priority()
        return sorted(
            json.dumps(job_record(job, code), sort_keys=True, default=str)
            for job in workflow.dag.jobs
        )


def main() -> None:
    """Print the snapshot of the config named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("configfile", type=Path)
    parser.add_argument("--snakefile", type=Path, default=Path("Snakefile"))
    parser.add_argument(
        "--without-code", action="store_true", help="blank the parameters that record code"
    )
    args = parser.parse_args()
    print("\n".join(snapshot(args.configfile, args.snakefile, code=not args.without_code)))


if __name__ == "__main__":
    main()
