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
        metrics=config["metrics"],
    log:
        out("logs/metric_tables/{split}.log"),
    conda:
        "../../envs/report.yaml"
    threads: 1
    resources:
        mem_mb=resource("default", "mem_mb", 2000),
        runtime=resource("default", "runtime", 10),
    script:
        "../scripts/metric_tables.py"


# All metric plots in one job: one process instead of one per metric and split.
rule plot_metrics:
    input:
        out("tables/metrics.csv"),
    output:
        **{
            f"{metric}_{split}_{ext}": metric_plot(metric, split, ext)
            for metric in config["metrics"]
            for split in SPLITS
            for ext in ("png", "pdf")
        },
    params:
        plots=[(metric, split) for metric in config["metrics"] for split in SPLITS],
    log:
        out("logs/plot_metrics.log"),
    conda:
        "../../envs/report.yaml"
    threads: 1
    resources:
        mem_mb=resource("default", "mem_mb", 2000),
        runtime=resource("default", "runtime", 10),
    script:
        "../scripts/plot_metrics.py"


rule plot_frequencies:
    input:
        lambda w: [
            f"{RESULTS}/frequencies/{j.language}/{j.tokenizer}/{j.size}.tsv"
            for j in study.frequency_plot_jobs(w.language)
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
            for j in study.frequency_plot_jobs(w.language)
        ],
        vocab_size=study.frequency_plot_size(),
        skip_top=config.get("plots", {}).get("skip_top_ranks", 100),
    log:
        out("logs/plot_frequencies/{language}.log"),
    conda:
        "../../envs/report.yaml"
    threads: 1
    resources:
        mem_mb=resource("default", "mem_mb", 2000),
        runtime=resource("default", "runtime", 10),
    script:
        "../scripts/plot_frequencies.py"


rule report_outputs:
    input:
        out("tables/metrics.csv"),
        out("tables/cost.csv"),
        expand(out("plots/cost.{ext}"), ext=["png", "pdf"]),
        expand(out("tables/metrics_{split}.{ext}"), split=SPLITS, ext=["md", "tex"]),
        expand(
            out("plots/metrics/{metric}_{split}.{ext}"),
            metric=config["metrics"],
            split=SPLITS,
            ext=["png", "pdf"],
        ),
        expand(
            out("plots/frequencies/{language}.{ext}"),
            language=study.languages if study.frequency_plot_size() else [],
            ext=["png", "pdf"],
        ),


rule cost_table:
    input:
        sorted({path for s in cost_sources() for path in [s["benchmark"], *s["texts"]]}),
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
        sources=cost_sources(),
    log:
        out("logs/cost_table.log"),
    conda:
        "../../envs/report.yaml"
    threads: 1
    resources:
        mem_mb=resource("default", "mem_mb", 2000),
        runtime=resource("default", "runtime", 10),
    script:
        "../scripts/cost_table.py"
