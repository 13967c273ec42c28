localrules: collect_metrics, metric_tables, plot_metrics, plot_frequencies, cost_table  # trivial jobs: not worth a cluster job


rule compute_metrics:
    # pretrained cells only: rule train_tokenizer scores the trained ones
    input:
        tokenizer_dir=lambda w: planners.tokenizers.pretrained_dir(w.tokenizer),
        train=out(planners.corpora.TRAIN),
        heldout=out(planners.corpora.HELDOUT),
    output:
        metrics=out(planners.metrics.METRICS),
        frequencies=out(planners.metrics.FREQUENCIES),
    params:
        **step("tokstudy.workflow.cell_job:score_saved_tokenizer"),
    log:
        out(log_path("compute_metrics", CELL)),
    benchmark:
        out(benchmark_path("compute_metrics", CELL))
    wildcard_constraints:
        size=PRETRAINED,
    threads: planners.threads("compute_metrics")
    resources:
        **planners.resources("compute_metrics"),
    script:
        RUN_STEP


rule collect_metrics:
    input:
        metric_files=[
            out(planners.metrics.METRICS, **vars(j)) for j in planners.tokenizers.scored_cells()
        ],
    output:
        table=report(
            out(planners.metrics.TABLE),
            category="Tables",
            labels={"table": "all metrics (tidy)"},
        ),
    params:
        **step("tokstudy.report.tables:write_collected"),
    log:
        out(log_path("collect_metrics")),
    threads: planners.threads("collect_metrics")
    resources:
        **planners.resources("collect_metrics"),
    script:
        RUN_STEP


rule metric_tables:
    input:
        table=out(planners.metrics.TABLE),
    output:
        markdown=report(
            out(planners.metrics.WIDE_TABLE, ext="md"),
            category="Tables",
            labels={"table": "wide tables", "split": "{split}", "format": "Markdown"},
        ),
        latex=report(
            out(planners.metrics.WIDE_TABLE, ext="tex"),
            category="Tables",
            labels={"table": "wide tables", "split": "{split}", "format": "LaTeX"},
        ),
    params:
        **step("tokstudy.report.tables:write_wide_tables"),
        metrics=planners.metrics.names,
    log:
        out(log_path("metric_tables", "{split}")),
    threads: planners.threads("metric_tables")
    resources:
        **planners.resources("metric_tables"),
    script:
        RUN_STEP


# The metric plots of one split in one job: a process per plot would spend about as long
# starting and importing as plotting, and the two splits' jobs run side by side at the end
# of a study.
rule plot_metrics:
    input:
        table=out(planners.metrics.TABLE),
    output:
        **{
            f"{metric}_{ext}": plot_output(
                planners.metrics.PLOT,
                "Metrics against vocabulary size",
                ext,
                metric=metric,
                split="{split}",
            )
            for metric in planners.metrics.names
            for ext in ("png", "pdf")
        },
    params:
        **step("tokstudy.report.plots:plot_split"),
        metrics=planners.metrics.names,
    log:
        out(log_path("plot_metrics", "{split}")),
    threads: planners.threads("plot_metrics")
    resources:
        **planners.resources("plot_metrics"),
    script:
        RUN_STEP


# The token-frequency plots of every language in one job (as for plot_metrics); without
# plots.frequency_vocab_size the rule has no outputs and no job.
FREQUENCY_PLOTS = planners.metrics.frequency_plots()

rule plot_frequencies:
    input:
        tables=[
            out(planners.metrics.FREQUENCIES, **vars(cell))
            for cells in FREQUENCY_PLOTS.values()
            for cell in cells.values()
        ],
    output:
        **{
            f"{language}_{ext}": plot_output(
                planners.metrics.FREQUENCY_PLOT,
                "Token-frequency distributions",
                ext,
                language=language,
            )
            for language in FREQUENCY_PLOTS
            for ext in ("png", "pdf")
        },
    params:
        **step("tokstudy.report.plots:plot_language_frequencies"),
        plots={language: list(cells) for language, cells in FREQUENCY_PLOTS.items()},
        vocab_size=planners.metrics.frequency_plot_size(),
        skip_top=planners.metrics.skip_top_ranks,
    log:
        out(log_path("plot_frequencies")),
    threads: planners.threads("plot_frequencies")
    resources:
        **planners.resources("plot_frequencies"),
    script:
        RUN_STEP


rule metric_outputs:
    input:
        planners.metrics.targets(),


# every tokenizer training and metric pass whose time and memory the cost table shows
COST_SOURCES = planners.cost_sources()


rule cost_table:
    input:
        sorted({path for s in COST_SOURCES for path in [s["figures"], *s["texts"]]}),
    output:
        csv=report(
            out(planners.metrics.COST_TABLE),
            category="Cost",
            labels={"output": "time and peak memory per training, metric pass and job (CSV)"},
        ),
        plots=[
            report(
                out(planners.metrics.COST_PLOT, ext="png"),
                category="Cost",
                labels={"output": "training time and peak memory against vocabulary size"},
            ),
            out(planners.metrics.COST_PLOT, ext="pdf"),
        ],
    params:
        **step("tokstudy.report.cost:write_cost"),
        sources=COST_SOURCES,
    log:
        out(log_path("cost_table")),
    threads: planners.threads("cost_table")
    resources:
        **planners.resources("cost_table"),
    script:
        RUN_STEP
