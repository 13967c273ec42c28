"""tokstudy: language × tokenizer × vocabulary size → tokenizers → metrics → tables, plots."""

from pathlib import Path

import yaml
from snakemake.utils import min_version, update_config, validate

from tokstudy.workflow.config_files import check_config_files, check_schema, typed_overrides
from tokstudy.workflow import study_lock, training_state
from tokstudy.errors import TokstudyError
from tokstudy.workflow.results_dir import mark_results_dir
from tokstudy.workflow.scheduler_wakeups import keep_one_wakeup
from tokstudy.workflow.plan import plan_study

min_version("9.0")

CONFIG_SCHEMA = "workflow/schemas/config.schema.yaml"


# The embedded default; a study given with --configfile replaces it instead of extending it.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# --config models={seeds: [0]} means the number 0, as in a study file (Snakemake keeps
# nested --config values as text).
update_config(config, typed_overrides(workflow.config_settings.overwrite_config or {}))

# One line for a duplicated key or a schema violation (Snakemake accepts the first and dumps
# the whole schema for the second). The schema checks shapes only; the study (built below,
# tokstudy.workflow.study.core.Study) fills in the defaults (tokstudy.workflow.study.defaults) and is the
# only reader of config.
try:
    check_config_files(workflow.configfiles)
    check_schema(config, yaml.safe_load(Path(workflow.source_path(CONFIG_SCHEMA)).read_text()))
except TokstudyError as exc:
    raise WorkflowError(f"config error: {exc}") from None
validate(config, CONFIG_SCHEMA)

# The one place the config is read: the study resolves it (defaults) and its plan's
# planners (cross-key checks) answer every rule; no .smk file indexes config. `tokstudy
# check-config` runs the same plan_study, so it refuses what this start refuses.
try:
    planners = plan_study(config)
    study = planners.study
except TokstudyError as exc:
    raise WorkflowError(f"config error: {exc}") from None


# A run (not a dry run, not --unlock) marks the results folder as tokstudy's
# (tokstudy.workflow.results_dir) and takes its lock (tokstudy.workflow.study_lock: one writer per study
# folder, whatever the working directory); a folder it cannot write into or that another
# run holds stops it here with one line, before any job starts. The lock goes when the run
# ends. The scheduler then keeps one pending wake-up instead of one per finished job
# (tokstudy.workflow.scheduler_wakeups: a Snakemake 9 loop that otherwise takes a core's fifth).
onstart:
    try:
        mark_results_dir(study.results_dir)
        study_lock.acquire(study.results_dir)
    except TokstudyError as exc:
        raise WorkflowError(str(exc)) from None
    training_state.remember(study.results_dir)
    keep_one_wakeup()


# A training job that finished keeps its outputs under checkpoints/ until Snakemake has
# recorded it (tokstudy.workflow.training_state): killed after writing them, it takes them
# back instead of training again. Those of the jobs recorded during this run go here.
onsuccess:
    training_state.drop_recorded(study.results_dir)
    study_lock.release(study.results_dir)


onerror:
    if not workflow.execution_settings.keep_incomplete:
        training_state.drop_recorded(study.results_dir)
    study_lock.release(study.results_dir)


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/corpora.smk"
include: "workflow/rules/tokenizers.smk"
include: "workflow/rules/pretrained.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/analyses/segmentation.smk"
include: "workflow/rules/analyses/morphology.smk"
include: "workflow/rules/analyses/parity.smk"
include: "workflow/rules/analyses/multilingual.smk"
include: "workflow/rules/analyses/udhr.smk"
include: "workflow/rules/analyses/morphscore.smk"
include: "workflow/rules/analyses/numbers.smk"
include: "workflow/rules/analyses/robustness.smk"
include: "workflow/rules/analyses/correlation.smk"
include: "workflow/rules/nmt.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        planners.targets(),
    default_target: True


rule analysis_outputs:
    input:
        planners.analyses.targets(),
