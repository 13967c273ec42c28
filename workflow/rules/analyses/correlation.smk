# Correlation analysis (tokstudy.analyses.correlation, on whenever the study has a models: or
# nmt: section): intrinsic metrics of every cell against its downstream scores. NMT cells take
# the metrics of the NMT stage's own tokenizers (rule nmt_tokenizer_metrics, nmt.smk).


localrules: correlation  # trivial jobs: not worth a cluster job


correlation_plan = planners.analyses["correlation"]


rule correlation:
    input:
        metrics_csv=out(planners.metrics.TABLE),
        model_results=out(planners.models.RESULTS_TABLE) if planners.models.section.models else [],
        nmt_score_files=planners.nmt.score_files(),
        nmt_metric_files=correlation_plan.nmt_metric_files(),
    output:
        csv=out(correlation_plan.CORRELATION, ext="csv"),
        markdown=report(
            out(correlation_plan.CORRELATION, ext="md"),
            category="Analyses",
            labels={"analysis": "intrinsic metrics vs downstream scores"},
        ),
        ranking_csv=out(correlation_plan.CORRELATION_RANKING, ext="csv"),
        ranking_markdown=report(
            out(correlation_plan.CORRELATION_RANKING, ext="md"),
            category="Analyses",
            labels={"analysis": "intrinsic metrics ranked per downstream score"},
        ),
        png=report(
            out(correlation_plan.CORRELATION_PLOT),
            category="Analyses",
            labels={"analysis": "intrinsic metrics vs downstream scores (plot)"},
        ),
        cells=out(correlation_plan.CORRELATION_CELLS, ext="csv"),
        cells_json=out(correlation_plan.CORRELATION_CELLS, ext="json"),
        mixed_csv=out(correlation_plan.CORRELATION_MIXED, ext="csv"),
        mixed_markdown=report(
            out(correlation_plan.CORRELATION_MIXED, ext="md"),
            category="Analyses",
            labels={"analysis": "mixed models of downstream scores"},
        ),
        family_csv=out(correlation_plan.CORRELATION_FAMILY, ext="csv"),
        family_markdown=report(
            out(correlation_plan.CORRELATION_FAMILY, ext="md"),
            category="Analyses",
            labels={"analysis": "intrinsic metrics within and across tokenizer families"},
        ),
        comparison_csv=out(correlation_plan.CORRELATION_COMPARISON, ext="csv"),
        comparison_markdown=report(
            out(correlation_plan.CORRELATION_COMPARISON, ext="md"),
            category="Analyses",
            labels={"analysis": "the primary metric against the others"},
        ),
        sensitivity_csv=out(correlation_plan.CORRELATION_SENSITIVITY, ext="csv"),
        sensitivity_markdown=report(
            out(correlation_plan.CORRELATION_SENSITIVITY, ext="md"),
            category="Analyses",
            labels={"analysis": "every verdict with and without flagged runs"},
        ),
    params:
        **step("tokstudy.analyses.correlation.run:correlation_analysis"),
        metric_names=planners.metrics.names,
        settings=correlation_plan.resampling(),
        nmt_sides=correlation_plan.nmt_metric_sides(),
        families=planners.tokenizers.families(),
    log:
        out(log_path("correlation")),
    threads: planners.threads("correlation")
    resources:
        **planners.resources("correlation"),
    script:
        RUN_STEP


rule correlation_outputs:
    input:
        correlation_plan.targets(),
