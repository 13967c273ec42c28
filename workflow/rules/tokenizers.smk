rule train_tokenizer:
    input:
        train=out(planners.corpora.TRAIN),
    output:
        directory(out(planners.tokenizers.TOKENIZER)),
    params:
        spec=lambda w: planners.tokenizers.train_spec(job_of(w)),
    log:
        out(log_path("train_tokenizer", CELL)),
    benchmark:
        out(benchmark_path("train_tokenizer", CELL))
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("train_tokenizer")
    resources:
        **planners.resources("train_tokenizer"),
    script:
        "../scripts/train_tokenizer.py"
