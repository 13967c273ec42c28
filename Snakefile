"""tokstudy: language × tokenizer × vocabulary size → tokenizers → metrics → tables, plots."""

from snakemake.utils import min_version, validate

min_version("9.0")


# The embedded default; a study given with --configfile replaces it instead of extending it.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/corpora.smk"
include: "workflow/rules/tokenizers.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/nmt.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        rules.report_outputs.input,
        rules.model_outputs.input,
        rules.analysis_outputs.input,
        rules.nmt_outputs.input,
        rules.correlation_outputs.input,
    default_target: True
