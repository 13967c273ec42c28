rule train_tokenizer:
    input:
        train=out("corpora/{language}/train.txt"),
    output:
        directory(out("tokenizers/{language}/{tokenizer}/{size}")),
    params:
        spec=lambda w: study.train_spec(job_of(w)),
    log:
        out("logs/train_tokenizer/{language}/{tokenizer}/{size}.log"),
    benchmark:
        out("benchmarks/train_tokenizer/{language}/{tokenizer}/{size}.tsv")
    conda:
        "../../envs/core.yaml"
    threads: resource("train_tokenizer", "threads", 1)
    resources:
        mem_mb=resource("train_tokenizer", "mem_mb", 4000),
        runtime=resource("train_tokenizer", "runtime", 60),
    script:
        "../scripts/train_tokenizer.py"
