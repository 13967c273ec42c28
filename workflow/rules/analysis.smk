rule segmentation_table:
    input:
        train=out("corpora/{language}/train.txt"),
        tokenizers=lambda w: [
            out(f"tokenizers/{j.language}/{j.tokenizer}/{j.size}")
            for j in study.segmentation_jobs(w.language)
        ],
    output:
        csv=out("tables/analysis/segmentation_{language}.csv"),
        markdown=report(
            out("tables/analysis/segmentation_{language}.md"),
            category="Analyses",
            labels={"analysis": "segmentations", "language": "{language}"},
        ),
    params:
        words=lambda w: config["analyses"]["segmentation"]["words"][w.language],
        tokenizers=lambda w: [
            f"{j.tokenizer} ({j.size})" for j in study.segmentation_jobs(w.language)
        ],
    log:
        out("logs/segmentation_table/{language}.log"),
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=resource("default", "mem_mb", 2000),
        runtime=resource("default", "runtime", 10),
    script:
        "../../scripts/analysis_segmentation.py"


rule morphological_alignment:
    input:
        [out(f"tokenizers/{j.language}/{j.tokenizer}/{j.size}") for j in study.jobs()],
    output:
        csv=out("tables/analysis/morphological_alignment.csv"),
        markdown=report(
            out("tables/analysis/morphological_alignment.md"),
            category="Analyses",
            labels={"analysis": "morphological alignment (UD)"},
        ),
    params:
        ud_root=study.analyses.get("ud_root"),
        jobs=[(j.language, j.tokenizer, j.size) for j in study.jobs()],
    log:
        out("logs/morphological_alignment.log"),
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=resource("default", "mem_mb", 4000),
        runtime=resource("default", "runtime", 60),
    script:
        "../../scripts/analysis_morphology.py"


rule tokenization_parity:
    input:
        reference_text=out(f"corpora/{study.analyses.get('parity', {}).get('reference', 'none')}/heldout.txt"),
        target_text=out(f"corpora/{study.analyses.get('parity', {}).get('target', 'none')}/heldout.txt"),
        reference_tokenizers=[
            out(f"tokenizers/{a.language}/{a.tokenizer}/{a.size}") for a, _ in study.parity_pairs()
        ],
        target_tokenizers=[
            out(f"tokenizers/{b.language}/{b.tokenizer}/{b.size}") for _, b in study.parity_pairs()
        ],
    output:
        csv=out("tables/analysis/parity.csv"),
        markdown=report(
            out("tables/analysis/parity.md"),
            category="Analyses",
            labels={"analysis": "tokenization parity"},
        ),
    params:
        pairs=[(a.tokenizer, a.size) for a, _ in study.parity_pairs()],
        reference=study.analyses.get("parity", {}).get("reference"),
        target=study.analyses.get("parity", {}).get("target"),
    log:
        out("logs/tokenization_parity.log"),
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=resource("default", "mem_mb", 2000),
        runtime=resource("default", "runtime", 30),
    script:
        "../../scripts/analysis_parity.py"


rule analysis_outputs:
    input:
        expand(
            out("tables/analysis/segmentation_{language}.{ext}"),
            language=study.segmentation_languages(),
            ext=["csv", "md"],
        ),
        expand(
            out("tables/analysis/morphological_alignment.{ext}"),
            ext=["csv", "md"] if study.analyses.get("ud_root") else [],
        ),
        expand(
            out("tables/analysis/parity.{ext}"),
            ext=["csv", "md"] if study.parity_pairs() else [],
        ),
