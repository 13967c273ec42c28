rule download_corpus:
    output:
        "resources/downloads/{language}.raw",
    params:
        url=lambda w: study.language_entry(w.language)["url"],
        sha256=lambda w: study.language_entry(w.language)["sha256"],
    log:
        out("logs/download_corpus/{language}.log"),
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=resource("prepare_corpus", "mem_mb", 1000),
        runtime=resource("prepare_corpus", "runtime", 30),
    script:
        "../../scripts/download_corpus.py"


rule prepare_corpus:
    input:
        lambda w: study.source_files(w.language),
    output:
        train=out("corpora/{language}/train.txt"),
        heldout=out("corpora/{language}/heldout.txt"),
        stats=out("corpora/{language}/stats.json"),
    params:
        settings=lambda w: {
            "heldout": study.corpus_setting(w.language, "heldout") or 0.1,
            "max_lines": study.corpus_setting(w.language, "max_lines"),
            "on_invalid_utf8": study.corpus_setting(w.language, "on_invalid_utf8") or "error",
            "seed": config["seed"],
        },
    log:
        out("logs/prepare_corpus/{language}.log"),
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=resource("prepare_corpus", "mem_mb", 1000),
        runtime=resource("prepare_corpus", "runtime", 30),
    script:
        "../../scripts/prepare_corpus.py"
