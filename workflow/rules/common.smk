from pathlib import Path

from tokstudy.study import Job
from tokstudy.cells import CORPUS_SPLITS, PRETRAINED, FULL_SIZE_LABEL
from tokstudy.study.paths import CELL, benchmark_path, log_path

# `study` and `planners` (its StudyPlan) come from the Snakefile, which builds them once.
SPLITS = list(CORPUS_SPLITS)


def out(pattern, **values):
    """A planner's path pattern under the study's results folder, ``values`` filled in."""
    return study.out(pattern, **values)


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
    path = out(planners.metrics.PLOT, metric=metric, split=split, ext=ext)
    if ext == "pdf":
        return path
    labels = {"metric": metric, "split": split}
    return report(path, category="Metrics against vocabulary size", labels=labels)
