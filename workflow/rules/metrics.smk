localrules: collect_metrics  # trivial jobs: not worth a cluster job


rule compute_metrics:
    input:
        tokenizer=lambda w: study.tokenizer_dir(job_of(w)),
        train=out("corpora/{language}/train.txt"),
        heldout=out("corpora/{language}/heldout.txt"),
    output:
        metrics=out("metrics/{language}/{tokenizer}/{size}.tsv"),
        frequencies=out("frequencies/{language}/{tokenizer}/{size}.tsv"),
    params:
        language=lambda w: w.language,
    log:
        out("logs/compute_metrics/{language}/{tokenizer}/{size}.log"),
    benchmark:
        out("benchmarks/compute_metrics/{language}/{tokenizer}/{size}.tsv")
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("compute_metrics")
    resources:
        **planners.resources("compute_metrics"),
    script:
        "../scripts/compute_metrics.py"


rule collect_metrics:
    input:
        [f"{RESULTS}/metrics/{j.language}/{j.tokenizer}/{j.size}.tsv" for j in study.scored_jobs()],
    output:
        report(
            out("tables/metrics.csv"),
            category="Tables",
            labels={"table": "all metrics (tidy)"},
        ),
    log:
        out("logs/collect_metrics.log"),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("collect_metrics")
    resources:
        **planners.resources("collect_metrics"),
    script:
        "../scripts/collect_metrics.py"
