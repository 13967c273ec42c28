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
    threads: planners.threads("train_tokenizer")
    resources:
        **planners.resources("train_tokenizer"),
    script:
        "../scripts/train_tokenizer.py"
