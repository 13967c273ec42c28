localrules: metric_tables, plot_metric, plot_frequencies  # trivial jobs: not worth a cluster job


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
        "../../scripts/make_tables.py"


rule plot_metric:
    input:
        out("tables/metrics.csv"),
    output:
        png=report(
            out("plots/metrics/{metric}_{split}.png"),
            category="Metrics against vocabulary size",
            labels={"metric": "{metric}", "split": "{split}"},
        ),
        pdf=out("plots/metrics/{metric}_{split}.pdf"),
    log:
        out("logs/plot_metric/{metric}_{split}.log"),
    conda:
        "../../envs/report.yaml"
    threads: 1
    resources:
        mem_mb=resource("default", "mem_mb", 2000),
        runtime=resource("default", "runtime", 10),
    script:
        "../../scripts/plot_metric.py"


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
        "../../scripts/plot_frequencies.py"


rule report_outputs:
    input:
        out("tables/metrics.csv"),
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
