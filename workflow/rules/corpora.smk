localrules: download_corpus  # the login node has the network a compute node may lack

from tokstudy.corpora import MAX_LINE_BYTES


# Downloads are named by their checksum inside the study's results folder (content-addressed:
# two studies never share one, a new URL + sha256 is a new file); prepare_corpus verifies the
# checksum again before reading.
rule download_corpus:
    output:
        out("downloads/{sha256}.raw"),
    wildcard_constraints:
        sha256="[0-9a-f]{64}",
    params:
        source=lambda w: study.download_source(w.sha256),
    log:
        out("logs/download_corpus/{sha256}.log"),
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=resource("prepare_corpus", "mem_mb", 1000),
        runtime=resource("prepare_corpus", "runtime", 30),
    script:
        "../scripts/download_corpus.py"


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
            "max_line_bytes": study.corpus_setting(w.language, "max_line_bytes")
            or MAX_LINE_BYTES,
            "checksums": study.corpus_checksums(w.language),
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
        "../scripts/prepare_corpus.py"
