# Multilingual tokenizers (tokstudy.analyses.multilingual): the mixed text and the
# per-language tables; the tokenizers themselves are trained by rule
# train_multilingual_tokenizer (tokenizers.smk).


localrules: multilingual_tables, plot_multilingual  # trivial jobs: not worth a cluster job


multilingual_plan = planners.analyses["multilingual"]


rule multilingual_corpus:
    input:
        texts=[out(planners.corpora.TRAIN, language=language) for language in multilingual_plan.languages()],
    output:
        train=out(multilingual_plan.MULTILINGUAL_TRAIN),
        summary=out(multilingual_plan.MULTILINGUAL_MIX),
        languages=out(multilingual_plan.MULTILINGUAL_LANGUAGES),
    params:
        **step("tokstudy.analyses.multilingual.tables:write_multilingual_corpus"),
        corpora=lambda w, input: dict(zip(multilingual_plan.languages(), input.texts)),
        **multilingual_plan.sampling(),
    log:
        out(log_path("multilingual_corpus")),
    threads: planners.threads("multilingual_corpus")
    resources:
        **planners.resources("multilingual_corpus"),
    script:
        RUN_STEP


rule multilingual_tables:
    input:
        tokenizers=[
            out(planners.tokenizers.MULTILINGUAL_TOKENIZER, **vars(j))
            for j in multilingual_plan.cells()
        ]
        + [planners.tokenizers.pretrained_dir(j.tokenizer) for j in multilingual_plan.comparisons()],
        train=[out(planners.corpora.TRAIN, language=lang) for lang in multilingual_plan.languages()],
        heldout=[out(planners.corpora.HELDOUT, language=lang) for lang in multilingual_plan.languages()],
        mix_summary=out(multilingual_plan.MULTILINGUAL_MIX),
    output:
        share_csv=out(multilingual_plan.MULTILINGUAL_TABLE, table="vocabulary_share", ext="csv"),
        share_markdown=report(
            out(multilingual_plan.MULTILINGUAL_TABLE, table="vocabulary_share", ext="md"),
            category="Analyses",
            labels={"analysis": "multilingual tokenizers: vocabulary share"},
        ),
        fertility_csv=out(multilingual_plan.MULTILINGUAL_TABLE, table="fertility", ext="csv"),
        fertility_markdown=report(
            out(multilingual_plan.MULTILINGUAL_TABLE, table="fertility", ext="md"),
            category="Analyses",
            labels={"analysis": "multilingual tokenizers: fertility"},
        ),
    params:
        **step("tokstudy.analyses.multilingual.tables:write_multilingual_tables"),
        tokenizer_dirs=lambda w, input: dict(
            zip(
                [
                    (j.tokenizer, j.size)
                    for j in multilingual_plan.cells() + multilingual_plan.comparisons()
                ],
                input.tokenizers,
            )
        ),
        train_texts=lambda w, input: dict(zip(multilingual_plan.languages(), input.train)),
        heldout_texts=lambda w, input: dict(zip(multilingual_plan.languages(), input.heldout)),
    log:
        out(log_path("multilingual_tables")),
    threads: planners.threads("multilingual_tables")
    resources:
        **planners.resources("multilingual_tables"),
    script:
        RUN_STEP


rule plot_multilingual:
    input:
        table=out(multilingual_plan.MULTILINGUAL_TABLE, table="vocabulary_share", ext="csv"),
    output:
        png=report(
            out(multilingual_plan.MULTILINGUAL_PLOT, ext="png"),
            category="Analyses",
            labels={"analysis": "multilingual tokenizers: vocabulary share (plot)"},
        ),
        pdf=out(multilingual_plan.MULTILINGUAL_PLOT, ext="pdf"),
    params:
        **step("tokstudy.analyses.multilingual.plots:plot_vocabulary_share"),
    log:
        out(log_path("plot_multilingual")),
    threads: planners.threads("plot_multilingual")
    resources:
        **planners.resources("plot_multilingual"),
    script:
        RUN_STEP
