# Morphological alignment with UD lemmas (tokstudy.analyses.morphology).


morphology_plan = planners.analyses["morphology"]


rule morphological_alignment:
    input:
        [planners.tokenizers.tokenizer_dir(j) for j in planners.tokenizers.scored_cells()],
    output:
        csv=out(morphology_plan.MORPHOLOGICAL_ALIGNMENT, ext="csv"),
        markdown=report(
            out(morphology_plan.MORPHOLOGICAL_ALIGNMENT, ext="md"),
            category="Analyses",
            labels={"analysis": "morphological alignment (UD)"},
        ),
    params:
        **step("tokstudy.workflow.analyses.morphology.steps.morphological_alignment"),
        ud_root=morphology_plan.ud_root,
        jobs=[(j.language, j.tokenizer, j.size) for j in planners.tokenizers.scored_cells()],
    log:
        out(log_path("morphological_alignment")),
    threads: planners.threads("morphological_alignment")
    resources:
        **planners.resources("morphological_alignment"),
    script:
        RUN_STEP
