# MorphScore-style alignment on every UD treebank with lemmas (tokstudy.analyses.morphscore).


localrules: plot_morphscore_heatmap  # trivial job: not worth a cluster job


morphscore_plan = planners.analyses["morphscore"]


rule morphscore:
    input:
        sorted({str(p.directory) for p in morphscore_plan.tokenizers_scored()}),
    output:
        csv=out(morphscore_plan.MORPHSCORE, ext="csv"),
        markdown=report(
            out(morphscore_plan.MORPHSCORE, ext="md"),
            category="Analyses",
            labels={"analysis": "MorphScore (UD)"},
        ),
        json=out(morphscore_plan.MORPHSCORE, ext="json"),
    params:
        **step("tokstudy.workflow.analyses.morphscore.steps.morphscore"),
        treebanks={k: [str(f) for f in v] for k, v in morphscore_plan.treebanks().items()},
        tokenizers=[vars(p) for p in morphscore_plan.tokenizers_scored()],
        uncovered=morphscore_plan.uncovered(),
    log:
        out(log_path("morphscore")),
    threads: planners.threads("morphscore")
    resources:
        **planners.resources("morphscore"),
    script:
        RUN_STEP


rule plot_morphscore_heatmap:
    input:
        out(morphscore_plan.MORPHSCORE, ext="csv"),
    output:
        png=report(
            out(morphscore_plan.MORPHSCORE_PLOT, ext="png"),
            category="Analyses",
            labels={"analysis": "MorphScore (UD): heat map"},
        ),
        pdf=out(morphscore_plan.MORPHSCORE_PLOT, ext="pdf"),
    params:
        **step("tokstudy.workflow.analyses.morphscore.steps.plot_morphscore_heatmap"),
    log:
        out(log_path("plot_morphscore_heatmap")),
    threads: planners.threads("plot_morphscore_heatmap")
    resources:
        **planners.resources("plot_morphscore_heatmap"),
    script:
        RUN_STEP
