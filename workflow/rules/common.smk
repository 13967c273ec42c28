from pathlib import Path

from tokstudy.tokenizers.cells import CORPUS_SPLITS, PRETRAINED, FULL_SIZE_LABEL
from tokstudy.training.run_state import MODEL_DIR
from tokstudy.workflow.code_fingerprint import code_fingerprint
from tokstudy.workflow.study.paths import CELL, benchmark_path, checkpoint_path, log_path

# `study` and `planners` (its StudyPlan) come from the Snakefile, which builds them once.
SPLITS = list(CORPUS_SPLITS)


#: the script of every rule (one dispatcher); a rule names its step with step()
RUN_STEP = str(Path(workflow.basedir) / "workflow/scripts/run_step.py")


def step(function):
    """A rule's params that run ``function`` through RUN_STEP: a library function
    (``tokstudy.<package>.<module>:<function>``, called with the rule's inputs, outputs,
    params and wildcards of its parameters' names: tokstudy.workflow.binder); its name and
    the fingerprint of its code
    (tokstudy.workflow.code_fingerprint), so that a change to that code, and only to that
    code, reruns the rule's jobs."""
    return {"step": function, "code": code_fingerprint(function)}


def checkpoints(rule, run):
    """``params:`` the checkpoint root of a training job whose run folder is the pattern
    ``run`` (``checkpoint_path``: outside the declared outputs, so Snakemake never
    deletes a checkpoint of a killed job)."""
    return lambda w: out(checkpoint_path(rule, run), **dict(w.items()))


def folder(path):
    """The folder of one of a job's files, as a param (``lambda w, output:
    folder(output.summary)``: derived from the file, as Snakemake's lint asks of a path
    that prefixes an input or output)."""
    return str(Path(path).parent)


def model_folder(run):
    """``params:`` the saved model folder inside the run folder of a training job whose run
    folder is the pattern ``run`` (its ``model/``: a job that reads the model)."""
    return lambda w: str(Path(out(run, **dict(w.items()))) / MODEL_DIR)


def out(pattern, **values):
    """A planner's path pattern under the study's results folder, ``values`` filled in."""
    return study.out(pattern, **values)


wildcard_constraints:
    language=r"[a-z][a-z0-9_]*",
    tokenizer=r"[a-z][a-z0-9_]*",
    size=r"\d+|full|pretrained",
    split="|".join(SPLITS),
    metric="|".join(planners.metrics.names),


def every_size(pattern):
    """A cell's file ``pattern`` under the results folder for each size of the study's
    vocab_sizes, {language} and {tokenizer} left open (a train_tokenizer_sizes job)."""
    return expand(out(pattern), size=planners.tokenizers.shared_sizes(), allow_missing=True)


def cell_of(wildcards):
    """The study cell a job's wildcards name."""
    return planners.tokenizers.cell(wildcards.language, wildcards.tokenizer, wildcards.size)


def plot_output(pattern, category, ext, **labels):
    """A plot rule's output: ``pattern`` with ``ext`` and ``labels`` filled in; the PNG goes
    into the report under ``category``, labelled with ``labels``."""
    path = out(pattern, ext=ext, **labels)
    return report(path, category=category, labels=labels) if ext == "png" else path
