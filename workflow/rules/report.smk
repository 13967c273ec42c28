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


def cost_sources():
    """Every tokenizer-training and metric job: its cell, step, benchmark file and text."""
    sources = []
    for j in study.jobs():
        cell = {"language": j.language, "tokenizer": j.tokenizer, "size": j.size}
        train = out(f"corpora/{j.language}/train.txt")
        heldout = out(f"corpora/{j.language}/heldout.txt")
        for step, rule_name, texts in (
            ("train", "train_tokenizer", [train]),
            ("metrics", "compute_metrics", [train, heldout]),
        ):
            benchmark = out(f"benchmarks/{rule_name}/{j.language}/{j.tokenizer}/{j.size}.tsv")
            sources.append({**cell, "step": step, "benchmark": benchmark, "texts": texts})
    for j in study.multilingual_jobs():
        benchmark = out(f"benchmarks/train_multilingual_tokenizer/{j.tokenizer}/{j.size}.tsv")
        texts = [out("multilingual/corpus/train.txt")]
        sources.append(
            {"language": j.language, "tokenizer": j.tokenizer, "size": j.size}
            | {"step": "train_multilingual", "benchmark": benchmark, "texts": texts}
        )
    return sources


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
        "../../scripts/cost_table.py"
