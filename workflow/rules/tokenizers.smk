rule train_tokenizer:
    # one job per trained cell: trains, saves, then scores the tokenizer (the training
    # text encoded once); pretrained cells are scored by rule compute_metrics
    input:
        train=out(planners.corpora.TRAIN),
        heldout=out(planners.corpora.HELDOUT),
    output:
        directory(out(planners.tokenizers.TOKENIZER)),
        metrics=out(planners.metrics.METRICS),
        frequencies=out(planners.metrics.FREQUENCIES),
        cost=out(planners.tokenizers.CELL_COST),
    params:
        spec=lambda w: planners.tokenizers.train_spec(job_of(w)),
    log:
        out(log_path("train_tokenizer", CELL)),
    benchmark:
        out(benchmark_path("train_tokenizer", CELL))
    wildcard_constraints:
        size=rf"\d+|{FULL_SIZE_LABEL}",
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("train_tokenizer")
    resources:
        **planners.resources("train_tokenizer"),
    script:
        "../scripts/train_tokenizer.py"
