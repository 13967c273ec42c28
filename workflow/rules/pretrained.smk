localrules: download_pretrained  # the login node has the network a compute node may lack

rule download_pretrained:
    output:
        destination=out(planners.tokenizers.PRETRAINED_DOWNLOAD),
    params:
        **step("tokstudy.tokenizers.pretrained:download_hub_file"),
        url=lambda w: planners.tokenizers.pretrained_hub_url(w.name),
        sha256=lambda w: planners.tokenizers.pretrained[w.name]["sha256"],
    log:
        out(log_path("download_pretrained", "{name}")),
    threads: planners.threads("download_pretrained")
    resources:
        **planners.resources("download_pretrained"),
    script:
        RUN_STEP


rule import_pretrained:
    input:
        source=lambda w: planners.tokenizers.pretrained_source(w.name),
    output:
        directory=directory(out(planners.tokenizers.PRETRAINED)),
    params:
        **step("tokstudy.tokenizers.pretrained:import_pretrained"),
        entry=lambda w: planners.tokenizers.pretrained[w.name],
    log:
        out(log_path("import_pretrained", "{name}")),
    threads: planners.threads("import_pretrained")
    resources:
        **planners.resources("import_pretrained"),
    script:
        RUN_STEP
