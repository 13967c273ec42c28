# MorphScore-style alignment on every UD treebank with lemmas (tokstudy.analyses.morphscore).


localrules: plot_morphscore_heatmap  # trivial job: not worth a cluster job


morphscore_plan = planners.analyses["morphscore"]


rule morphscore:
    input:
        tokenizer_dirs=sorted({str(p.directory) for p in morphscore_plan.tokenizers_scored()}),
    output:
        csv=out(morphscore_plan.MORPHSCORE, ext="csv"),
        markdown=report(
            out(morphscore_plan.MORPHSCORE, ext="md"),
            category="Analyses",
            labels={"analysis": "MorphScore (UD)"},
        ),
        notes=out(morphscore_plan.MORPHSCORE, ext="json"),
    params:
        **step("tokstudy.analyses.morphscore.tables:write_morphscore"),
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
        table=out(morphscore_plan.MORPHSCORE, ext="csv"),
    output:
        png=report(
            out(morphscore_plan.MORPHSCORE_PLOT, ext="png"),
            category="Analyses",
            labels={"analysis": "MorphScore (UD): heat map"},
        ),
        pdf=out(morphscore_plan.MORPHSCORE_PLOT, ext="pdf"),
    params:
        **step("tokstudy.analyses.morphscore.tables:plot_morphscore"),
    log:
        out(log_path("plot_morphscore_heatmap")),
    threads: planners.threads("plot_morphscore_heatmap")
    resources:
        **planners.resources("plot_morphscore_heatmap"),
    script:
        RUN_STEP
