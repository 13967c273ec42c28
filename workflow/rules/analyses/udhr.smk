# Tokenization premiums on the UDHR (tokstudy.analyses.udhr).


localrules: plot_parity_udhr  # trivial jobs: not worth a cluster job


udhr_plan = planners.analyses["udhr"]


rule tokenization_parity_udhr:
    input:
        index_file=udhr_plan.index() or [],
        translations=list(udhr_plan.files().values()),
        tokenizer_dirs=udhr_plan.tokenizer_dirs(),
    output:
        csv=out(udhr_plan.PARITY_UDHR, ext="csv"),
        markdown=report(
            out(udhr_plan.PARITY_UDHR, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization premium (UDHR)"},
        ),
        fairness_csv=out(udhr_plan.PARITY_UDHR_FAIRNESS, ext="csv"),
        fairness_markdown=report(
            out(udhr_plan.PARITY_UDHR_FAIRNESS, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization premium fairness (UDHR)"},
        ),
        scripts_csv=out(udhr_plan.PARITY_UDHR_SCRIPTS, ext="csv"),
        scripts_markdown=report(
            out(udhr_plan.PARITY_UDHR_SCRIPTS, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization premium per script (UDHR)"},
        ),
        json=out(udhr_plan.PARITY_UDHR, ext="json"),
    params:
        files=lambda w, input: dict(zip(udhr_plan.files(), input.translations)),
        reference=udhr_plan.reference(),
        tokenizers=[vars(p) for p in udhr_plan.tokenizers_scored()],
        **step("tokstudy.analyses.udhr.tables:write_udhr_parity"),
    log:
        out(log_path("tokenization_parity_udhr")),
    threads: planners.threads("tokenization_parity_udhr")
    resources:
        **planners.resources("tokenization_parity_udhr"),
    script:
        RUN_STEP


rule plot_parity_udhr:
    input:
        table=out(udhr_plan.PARITY_UDHR, ext="csv"),
        scripts=out(udhr_plan.PARITY_UDHR_SCRIPTS, ext="csv"),
    output:
        map_png=report(
            out(udhr_plan.PARITY_UDHR_PLOT, plot="map", ext="png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (UDHR): world map"},
        ),
        map_pdf=out(udhr_plan.PARITY_UDHR_PLOT, plot="map", ext="pdf"),
        curves_png=report(
            out(udhr_plan.PARITY_UDHR_PLOT, plot="curves", ext="png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (UDHR): sorted curves"},
        ),
        curves_pdf=out(udhr_plan.PARITY_UDHR_PLOT, plot="curves", ext="pdf"),
        scripts_png=report(
            out(udhr_plan.PARITY_UDHR_PLOT, plot="scripts", ext="png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (UDHR): scripts"},
        ),
        scripts_pdf=out(udhr_plan.PARITY_UDHR_PLOT, plot="scripts", ext="pdf"),
    params:
        reference=udhr_plan.reference(),
        plots=lambda w, output: {
            plot: [output[f"{plot}_png"], output[f"{plot}_pdf"]] for plot in udhr_plan.plots
        },
        **step("tokstudy.analyses.udhr.plots:plot_udhr_premiums"),
    log:
        out(log_path("plot_parity_udhr")),
    threads: planners.threads("plot_parity_udhr")
    resources:
        **planners.resources("plot_parity_udhr"),
    script:
        RUN_STEP
