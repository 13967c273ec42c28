localrules: download_corpus  # the login node has the network a compute node may lack

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
    threads: planners.threads("download_corpus")
    resources:
        **planners.resources("download_corpus"),
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
        settings=lambda w: planners.corpora.settings(w.language),
    log:
        out("logs/prepare_corpus/{language}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("prepare_corpus")
    resources:
        **planners.resources("prepare_corpus"),
    script:
        "../scripts/prepare_corpus.py"
