# Segmentation tables (tokstudy.analyses.segmentation): a word list segmented by each
# tokenizer of one language.


localrules: segmentation_table  # trivial jobs: not worth a cluster job


segmentation_plan = planners.analyses["segmentation"]


rule segmentation_table:
    input:
        corpus=out(planners.corpora.TRAIN),
        tokenizers=lambda w: [planners.tokenizers.tokenizer_dir(j) for j in segmentation_plan.cells(w.language)],
    output:
        csv=out(segmentation_plan.SEGMENTATION, ext="csv"),
        markdown=report(
            out(segmentation_plan.SEGMENTATION, ext="md"),
            category="Analyses",
            labels={"analysis": "segmentations", "language": "{language}"},
        ),
    params:
        **step("tokstudy.analyses.segmentation.tables:write_segmentations"),
        words=lambda w: segmentation_plan.words(w.language),
        tokenizer_dirs=lambda w, input: dict(
            zip(
                [f"{j.tokenizer} ({j.size})" for j in segmentation_plan.cells(w.language)],
                input.tokenizers,
            )
        ),
    log:
        out(log_path("segmentation_table", "{language}")),
    threads: planners.threads("segmentation_table")
    resources:
        **planners.resources("segmentation_table"),
    script:
        RUN_STEP
