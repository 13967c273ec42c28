localrules: download_corpus  # the login node has the network a compute node may lack

# Downloads are named by their checksum inside the study's results folder (content-addressed:
# two studies never share one, a new URL + sha256 is a new file); prepare_corpus verifies the
# checksum again before reading.
rule download_corpus:
    output:
        destination=out(planners.corpora.DOWNLOAD),
    wildcard_constraints:
        sha256="[0-9a-f]{64}",
    params:
        **step("tokstudy.corpora.prepare:download"),
        url=lambda w: planners.corpora.download_source(w.sha256)[0],
        label=lambda w: planners.corpora.download_source(w.sha256)[1],
    log:
        out(log_path("download_corpus", "{sha256}")),
    threads: planners.threads("download_corpus")
    resources:
        **planners.resources("download_corpus"),
    script:
        RUN_STEP


rule prepare_corpus:
    input:
        files=lambda w: planners.corpora.source_files(w.language),
    output:
        train=out(planners.corpora.TRAIN),
        heldout=out(planners.corpora.HELDOUT),
        stats=out(planners.corpora.STATS),
    params:
        **step("tokstudy.corpora.prepare:prepare_language"),
        settings=lambda w: planners.corpora.settings(w.language),
    log:
        out(log_path("prepare_corpus", "{language}")),
    priority: planners.corpus_priority
    threads: planners.threads("prepare_corpus")
    resources:
        **planners.resources("prepare_corpus"),
    script:
        RUN_STEP
