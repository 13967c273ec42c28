# Robustness of segmentation to perturbed text (tokstudy.analyses.robustness).


localrules: plot_robustness_heatmap  # trivial job: not worth a cluster job


robustness_plan = planners.analyses["robustness"]


rule robustness:
    input:
        tokenizer_dirs=sorted({str(p.directory) for p in robustness_plan.tokenizers_scored()}),
        pud_files=list(robustness_plan.pud_files().values()),
        heldout_files=list(robustness_plan.heldout_files().values()),
    output:
        csv=out(robustness_plan.ROBUSTNESS, ext="csv"),
        markdown=report(
            out(robustness_plan.ROBUSTNESS, ext="md"),
            category="Analyses",
            labels={"analysis": "robustness"},
        ),
    params:
        **step("tokstudy.analyses.robustness.tables:write_robustness"),
        pud=lambda w, input: dict(zip(robustness_plan.pud_files(), input.pud_files)),
        heldout=lambda w, input: dict(zip(robustness_plan.heldout_files(), input.heldout_files)),
        tokenizers=[vars(p) for p in robustness_plan.tokenizers_scored()],
        perturbations=robustness_plan.perturbations(),
        settings={
            "seed": study.seed,
            "sentences": robustness_plan.settings.get("sentences"),
            "rate": robustness_plan.settings.get("rate"),
        },
    log:
        out(log_path("robustness")),
    threads: planners.threads("robustness")
    resources:
        **planners.resources("robustness"),
    script:
        RUN_STEP


rule plot_robustness_heatmap:
    input:
        table=out(robustness_plan.ROBUSTNESS, ext="csv"),
    output:
        png=report(
            out(robustness_plan.ROBUSTNESS_PLOT, ext="png"),
            category="Analyses",
            labels={"analysis": "robustness: heat map"},
        ),
        pdf=out(robustness_plan.ROBUSTNESS_PLOT, ext="pdf"),
    params:
        **step("tokstudy.analyses.robustness.tables:plot_robustness"),
    log:
        out(log_path("plot_robustness_heatmap")),
    threads: planners.threads("plot_robustness_heatmap")
    resources:
        **planners.resources("plot_robustness_heatmap"),
    script:
        RUN_STEP
