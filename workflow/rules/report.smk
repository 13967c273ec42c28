# The study page: segmentation viewer, metrics, plots and "which tokenizer" panel, one
# offline HTML file (docs/study-page.md); rerun when a tokenizer, text or table changes.
rule study_page:
    input:
        metrics=out(planners.metrics.TABLE),
        table_files=list(planners.page.tables().values()),
        tokenizers=[cell["directory"] for cell in planners.page.cells()],
        frequencies=[cell["frequencies"] for cell in planners.page.cells()],
        heldout_texts=list(planners.page.heldout().values()),
        udhr_texts=list(planners.page.udhr_article_one().values()),
        plots=planners.page.plots(),
    output:
        page=report(
            out(planners.page.PAGE),
            category="Study page",
            labels={"page": "index.html: segmentation viewer, metrics, which tokenizer"},
        ),
        recommendations=planners.page.recommendations(),
    params:
        cells=planners.page.cells(),
        heldout=planners.page.heldout(),
        words=planners.page.words(),
        udhr=planners.page.udhr_article_one(),
        tables=planners.page.tables(),
        seed=study.seed,
        **step("tokstudy.report.page.build:write_study_page"),
    log:
        out(log_path("study_page")),
    threads: planners.threads("study_page")
    resources:
        **planners.resources("study_page"),
    script:
        RUN_STEP
