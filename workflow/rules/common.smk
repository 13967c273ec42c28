from pathlib import Path

from tokstudy.study import PRETRAINED_DOWNLOAD_DIR, Job
from tokstudy.study.planners import CORPUS_SPLITS

# `study` and `planners` (study.plan) come from the Snakefile, which builds the study once.
SPLITS = list(CORPUS_SPLITS)
RESULTS = study.results_dir


def out(path):
    """A path under the study's results folder."""
    return f"{RESULTS}/{path}"


wildcard_constraints:
    language=r"[a-z][a-z0-9_]*",
    tokenizer=r"[a-z][a-z0-9_]*",
    size=r"\d+|full|pretrained",
    split="|".join(SPLITS),
    metric="|".join(planners.metrics.names),


def job_of(wildcards):
    """The study cell a job's wildcards name."""
    return Job(wildcards.language, wildcards.tokenizer, wildcards.size)


def metric_plot(metric, split, ext):
    """One metric plot of rule plot_metrics; the PNG goes into the report."""
    path = out(f"plots/metrics/{metric}_{split}.{ext}")
    if ext == "pdf":
        return path
    labels = {"metric": metric, "split": split}
    return report(path, category="Metrics against vocabulary size", labels=labels)
