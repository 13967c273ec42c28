from pathlib import Path

from tokstudy.errors import TokstudyError
from tokstudy.study import PRETRAINED_DOWNLOAD_DIR, Job, Study

try:
    study = Study(config)
except TokstudyError as exc:
    raise WorkflowError(f"config error: {exc}") from None

SPLITS = ["train", "heldout"]
RESULTS = config.get("results_dir", "results")


def out(path):
    """A path under the study's results folder."""
    return f"{RESULTS}/{path}"


wildcard_constraints:
    language=r"[a-z][a-z0-9_]*",
    tokenizer=r"[a-z][a-z0-9_]*",
    size=r"\d+|full|pretrained",
    split="|".join(SPLITS),
    metric="|".join(config["metrics"]),


def resource(rule_name, key, fallback):
    """A cluster resource of a rule from config.resources, else the default, else fallback."""
    table = config.get("resources", {})
    return table.get(rule_name, {}).get(key, table.get("default", {}).get(key, fallback))


def job_of(wildcards):
    """The study cell a job's wildcards name."""
    return Job(wildcards.language, wildcards.tokenizer, wildcards.size)
