localrules: metric_tables, plot_metrics, plot_frequencies, cost_table  # trivial jobs: not worth a cluster job


rule metric_tables:
    input:
        out("tables/metrics.csv"),
    output:
        markdown=report(
            out("tables/metrics_{split}.md"),
            category="Tables",
            labels={"table": "wide tables", "split": "{split}", "format": "Markdown"},
        ),
        latex=report(
            out("tables/metrics_{split}.tex"),
            category="Tables",
            labels={"table": "wide tables", "split": "{split}", "format": "LaTeX"},
        ),
    params:
        metrics=planners.metrics.names,
    log:
        out("logs/metric_tables/{split}.log"),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("metric_tables")
    resources:
        **planners.resources("metric_tables"),
    script:
        "../scripts/metric_tables.py"


# All metric plots in one job: one process instead of one per metric and split.
rule plot_metrics:
    input:
        out("tables/metrics.csv"),
    output:
        **{
            f"{metric}_{split}_{ext}": metric_plot(metric, split, ext)
            for metric in planners.metrics.names
            for split in SPLITS
            for ext in ("png", "pdf")
        },
    params:
        plots=[(metric, split) for metric in planners.metrics.names for split in SPLITS],
    log:
        out("logs/plot_metrics.log"),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("plot_metrics")
    resources:
        **planners.resources("plot_metrics"),
    script:
        "../scripts/plot_metrics.py"


rule plot_frequencies:
    input:
        lambda w: [
            f"{RESULTS}/frequencies/{j.language}/{j.tokenizer}/{j.size}.tsv"
            for j in planners.metrics.frequency_plot_jobs(w.language)
        ],
    output:
        png=report(
            out("plots/frequencies/{language}.png"),
            category="Token-frequency distributions",
            labels={"language": "{language}"},
        ),
        pdf=out("plots/frequencies/{language}.pdf"),
    params:
        tokenizers=lambda w: [
            f"{j.tokenizer} ({j.size})" if study.is_pretrained(j.tokenizer) else j.tokenizer
            for j in planners.metrics.frequency_plot_jobs(w.language)
        ],
        vocab_size=planners.metrics.frequency_plot_size(),
        skip_top=planners.metrics.skip_top_ranks,
    log:
        out("logs/plot_frequencies/{language}.log"),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("plot_frequencies")
    resources:
        **planners.resources("plot_frequencies"),
    script:
        "../scripts/plot_frequencies.py"


rule report_outputs:
    input:
        planners.metrics.targets(),


# every tokenizer-training and metric job whose time and memory the cost table shows
COST_SOURCES = planners.metrics.cost_sources(planners.analyses.multilingual_jobs())


rule cost_table:
    input:
        sorted({path for s in COST_SOURCES for path in [s["benchmark"], *s["texts"]]}),
    output:
        csv=report(
            out("tables/cost.csv"),
            category="Cost",
            labels={"output": "time and peak memory per job (CSV)"},
        ),
        png=report(
            out("plots/cost.png"),
            category="Cost",
            labels={"output": "training time and peak memory against vocabulary size"},
        ),
        pdf=out("plots/cost.pdf"),
    params:
        sources=COST_SOURCES,
    log:
        out("logs/cost_table.log"),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("cost_table")
    resources:
        **planners.resources("cost_table"),
    script:
        "../scripts/cost_table.py"
