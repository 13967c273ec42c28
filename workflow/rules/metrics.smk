localrules: collect_metrics  # trivial jobs: not worth a cluster job


rule compute_metrics:
    # pretrained cells only: rule train_tokenizer scores the trained ones
    input:
        tokenizer=lambda w: planners.tokenizers.pretrained_dir(w.tokenizer),
        train=out(planners.corpora.TRAIN),
        heldout=out(planners.corpora.HELDOUT),
    output:
        metrics=out(planners.metrics.METRICS),
        frequencies=out(planners.metrics.FREQUENCIES),
    params:
        **step("tokstudy.metrics.steps.compute_metrics"),
        language=lambda w: w.language,
    log:
        out(log_path("compute_metrics", CELL)),
    benchmark:
        out(benchmark_path("compute_metrics", CELL))
    wildcard_constraints:
        size=PRETRAINED,
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("compute_metrics")
    resources:
        **planners.resources("compute_metrics"),
    script:
        RUN_STEP


rule collect_metrics:
    input:
        [out(planners.metrics.METRICS, **vars(j)) for j in planners.tokenizers.scored_cells()],
    output:
        report(
            out(planners.metrics.TABLE),
            category="Tables",
            labels={"table": "all metrics (tidy)"},
        ),
    params:
        **step("tokstudy.metrics.steps.collect_metrics"),
    log:
        out(log_path("collect_metrics")),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("collect_metrics")
    resources:
        **planners.resources("collect_metrics"),
    script:
        RUN_STEP
