# Morphological alignment with UD lemmas (tokstudy.analyses.morphology).


morphology_plan = planners.analyses["morphology"]


rule morphological_alignment:
    input:
        tokenizers=[planners.tokenizers.tokenizer_dir(j) for j in planners.tokenizers.scored_cells()],
    output:
        csv=out(morphology_plan.MORPHOLOGICAL_ALIGNMENT, ext="csv"),
        markdown=report(
            out(morphology_plan.MORPHOLOGICAL_ALIGNMENT, ext="md"),
            category="Analyses",
            labels={"analysis": "morphological alignment (UD)"},
        ),
    params:
        **step("tokstudy.analyses.morphology.tables:write_morphological_alignment"),
        ud_root=morphology_plan.ud_root,
        tokenizer_dirs=lambda w, input: dict(
            zip(
                [(j.language, j.tokenizer, j.size) for j in planners.tokenizers.scored_cells()],
                input.tokenizers,
            )
        ),
    log:
        out(log_path("morphological_alignment")),
    threads: planners.threads("morphological_alignment")
    resources:
        **planners.resources("morphological_alignment"),
    script:
        RUN_STEP
