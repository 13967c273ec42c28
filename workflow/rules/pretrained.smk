localrules: download_pretrained  # the login node has the network a compute node may lack

rule download_pretrained:
    output:
        out(f"{PRETRAINED_DOWNLOAD_DIR}/{{name}}/tokenizer.json"),
    params:
        url=lambda w: study.pretrained_hub_url(w.name),
        sha256=lambda w: study.pretrained[w.name]["sha256"],
    log:
        out("logs/download_pretrained/{name}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("download_pretrained")
    resources:
        **planners.resources("download_pretrained"),
    script:
        "../scripts/download_pretrained.py"


rule import_pretrained:
    input:
        lambda w: study.pretrained_source(w.name),
    output:
        directory(out("pretrained/{name}")),
    params:
        entry=lambda w: study.pretrained[w.name],
    log:
        out("logs/import_pretrained/{name}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("import_pretrained")
    resources:
        **planners.resources("import_pretrained"),
    script:
        "../scripts/import_pretrained.py"
