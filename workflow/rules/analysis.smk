localrules: segmentation_table, plot_parity_pud, plot_parity_udhr, multilingual_tables, plot_multilingual, correlation  # trivial jobs: not worth a cluster job


rule segmentation_table:
    input:
        train=out(planners.corpora.TRAIN),
        tokenizers=lambda w: [planners.tokenizers.tokenizer_dir(j) for j in planners.analyses.segmentation_jobs(w.language)],
    output:
        csv=out(planners.analyses.SEGMENTATION, ext="csv"),
        markdown=report(
            out(planners.analyses.SEGMENTATION, ext="md"),
            category="Analyses",
            labels={"analysis": "segmentations", "language": "{language}"},
        ),
    params:
        **step("tokstudy.steps.analysis.segmentation_table"),
        words=lambda w: planners.analyses.segmentation_words(w.language),
        tokenizers=lambda w: [
            f"{j.tokenizer} ({j.size})" for j in planners.analyses.segmentation_jobs(w.language)
        ],
    log:
        out(log_path("segmentation_table", "{language}")),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("segmentation_table")
    resources:
        **planners.resources("segmentation_table"),
    script:
        RUN_STEP


rule morphological_alignment:
    input:
        [planners.tokenizers.tokenizer_dir(j) for j in planners.tokenizers.scored_jobs()],
    output:
        csv=out(planners.analyses.MORPHOLOGICAL_ALIGNMENT, ext="csv"),
        markdown=report(
            out(planners.analyses.MORPHOLOGICAL_ALIGNMENT, ext="md"),
            category="Analyses",
            labels={"analysis": "morphological alignment (UD)"},
        ),
    params:
        **step("tokstudy.steps.analysis.morphological_alignment"),
        ud_root=planners.analyses.section.get("ud_root"),
        jobs=[(j.language, j.tokenizer, j.size) for j in planners.tokenizers.scored_jobs()],
    log:
        out(log_path("morphological_alignment")),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("morphological_alignment")
    resources:
        **planners.resources("morphological_alignment"),
    script:
        RUN_STEP


rule tokenization_parity:
    input:
        **planners.analyses.parity_texts(),
        reference_tokenizers=[planners.tokenizers.tokenizer_dir(a) for a, _ in planners.analyses.parity_pairs()],
        target_tokenizers=[planners.tokenizers.tokenizer_dir(b) for _, b in planners.analyses.parity_pairs()],
    output:
        csv=out(planners.analyses.PARITY, ext="csv"),
        markdown=report(
            out(planners.analyses.PARITY, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization parity"},
        ),
    params:
        **step("tokstudy.steps.analysis.tokenization_parity"),
        pairs=[(a.tokenizer, a.size) for a, _ in planners.analyses.parity_pairs()],
        reference=planners.analyses.parity_language("reference"),
        target=planners.analyses.parity_language("target"),
    log:
        out(log_path("tokenization_parity")),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("tokenization_parity")
    resources:
        **planners.resources("tokenization_parity"),
    script:
        RUN_STEP


rule tokenization_parity_pud:
    input:
        corpora=list(planners.analyses.parity_files().values()),
        tokenizers=sorted({p.directory for p in planners.analyses.parity_tokenizers()}),
    output:
        csv=out(planners.analyses.PARITY_PUD, ext="csv"),
        markdown=report(
            out(planners.analyses.PARITY_PUD, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization premium (PUD)"},
        ),
        fairness_csv=out(planners.analyses.PARITY_PUD_FAIRNESS, ext="csv"),
        fairness_markdown=report(
            out(planners.analyses.PARITY_PUD_FAIRNESS, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization premium fairness (PUD)"},
        ),
        json=out(planners.analyses.PARITY_PUD, ext="json"),
    params:
        **step("tokstudy.steps.analysis.tokenization_parity_pud"),
        languages=list(planners.analyses.parity_files()),
        reference=planners.analyses.parity_language("reference"),
        tokenizers=[vars(p) for p in planners.analyses.parity_tokenizers()],
    log:
        out(log_path("tokenization_parity_pud")),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("tokenization_parity_pud")
    resources:
        **planners.resources("tokenization_parity_pud"),
    script:
        RUN_STEP


rule plot_parity_pud:
    input:
        out(planners.analyses.PARITY_PUD, ext="csv"),
    output:
        heatmap_png=report(
            out(planners.analyses.PARITY_PUD_PLOT, plot="heatmap", ext="png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (PUD): heat map"},
        ),
        heatmap_pdf=out(planners.analyses.PARITY_PUD_PLOT, plot="heatmap", ext="pdf"),
        bars_png=report(
            out(planners.analyses.PARITY_PUD_PLOT, plot="bars", ext="png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (PUD): bars"},
        ),
        bars_pdf=out(planners.analyses.PARITY_PUD_PLOT, plot="bars", ext="pdf"),
    params:
        **step("tokstudy.steps.analysis.plot_parity_pud"),
        reference=planners.analyses.parity_language("reference"),
    log:
        out(log_path("plot_parity_pud")),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("plot_parity_pud")
    resources:
        **planners.resources("plot_parity_pud"),
    script:
        RUN_STEP


rule tokenization_parity_udhr:
    input:
        index=planners.analyses.udhr_index() or [],
        translations=list(planners.analyses.udhr_files().values()),
        tokenizers=planners.analyses.udhr_tokenizer_dirs(),
    output:
        csv=out(planners.analyses.PARITY_UDHR, ext="csv"),
        markdown=report(
            out(planners.analyses.PARITY_UDHR, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization premium (UDHR)"},
        ),
        fairness_csv=out(planners.analyses.PARITY_UDHR_FAIRNESS, ext="csv"),
        fairness_markdown=report(
            out(planners.analyses.PARITY_UDHR_FAIRNESS, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization premium fairness (UDHR)"},
        ),
        scripts_csv=out(planners.analyses.PARITY_UDHR_SCRIPTS, ext="csv"),
        scripts_markdown=report(
            out(planners.analyses.PARITY_UDHR_SCRIPTS, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization premium per script (UDHR)"},
        ),
        json=out(planners.analyses.PARITY_UDHR, ext="json"),
    params:
        translations=list(planners.analyses.udhr_files()),
        reference=planners.analyses.udhr_reference(),
        tokenizers=[vars(p) for p in planners.analyses.udhr_tokenizers()],
        **step("tokstudy.steps.analysis.tokenization_parity_udhr"),
    log:
        out(log_path("tokenization_parity_udhr")),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("tokenization_parity_udhr")
    resources:
        **planners.resources("tokenization_parity_udhr"),
    script:
        RUN_STEP


rule plot_parity_udhr:
    input:
        table=out(planners.analyses.PARITY_UDHR, ext="csv"),
        scripts=out(planners.analyses.PARITY_UDHR_SCRIPTS, ext="csv"),
    output:
        map_png=report(
            out(planners.analyses.PARITY_UDHR_PLOT, plot="map", ext="png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (UDHR): world map"},
        ),
        map_pdf=out(planners.analyses.PARITY_UDHR_PLOT, plot="map", ext="pdf"),
        curves_png=report(
            out(planners.analyses.PARITY_UDHR_PLOT, plot="curves", ext="png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (UDHR): sorted curves"},
        ),
        curves_pdf=out(planners.analyses.PARITY_UDHR_PLOT, plot="curves", ext="pdf"),
        scripts_png=report(
            out(planners.analyses.PARITY_UDHR_PLOT, plot="scripts", ext="png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (UDHR): scripts"},
        ),
        scripts_pdf=out(planners.analyses.PARITY_UDHR_PLOT, plot="scripts", ext="pdf"),
    params:
        reference=planners.analyses.udhr_reference(),
        plots=list(planners.analyses.udhr_plots),
        **step("tokstudy.steps.analysis.plot_parity_udhr"),
    log:
        out(log_path("plot_parity_udhr")),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("plot_parity_udhr")
    resources:
        **planners.resources("plot_parity_udhr"),
    script:
        RUN_STEP


rule multilingual_corpus:
    input:
        [out(planners.corpora.TRAIN, language=language) for language in planners.analyses.multilingual_languages()],
    output:
        train=out(planners.analyses.MULTILINGUAL_TRAIN),
        summary=out(planners.analyses.MULTILINGUAL_MIX),
    params:
        **step("tokstudy.steps.analysis.multilingual_corpus"),
        languages=planners.analyses.multilingual_languages(),
        sampling=planners.analyses.multilingual_sampling(),
    log:
        out(log_path("multilingual_corpus")),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("multilingual_corpus")
    resources:
        **planners.resources("multilingual_corpus"),
    script:
        RUN_STEP


rule train_multilingual_tokenizer:
    input:
        train=out(planners.analyses.MULTILINGUAL_TRAIN),
    output:
        directory(out(planners.analyses.MULTILINGUAL_TOKENIZER)),
    params:
        **step("tokstudy.steps.analysis.train_multilingual_tokenizer"),
        spec=lambda w: planners.analyses.multilingual_spec(w.tokenizer, w.size),
    log:
        out(log_path("train_multilingual_tokenizer", planners.analyses.MULTILINGUAL_CELL)),
    benchmark:
        out(benchmark_path("train_multilingual_tokenizer", planners.analyses.MULTILINGUAL_CELL))
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("train_multilingual_tokenizer")
    resources:
        **planners.resources("train_multilingual_tokenizer"),
    script:
        RUN_STEP


rule multilingual_tables:
    input:
        tokenizers=[
            out(planners.analyses.MULTILINGUAL_TOKENIZER, **vars(j))
            for j in planners.analyses.multilingual_jobs()
        ]
        + [planners.tokenizers.pretrained_dir(j.tokenizer) for j in planners.analyses.multilingual_comparisons()],
        train=[out(planners.corpora.TRAIN, language=lang) for lang in planners.analyses.multilingual_languages()],
        heldout=[out(planners.corpora.HELDOUT, language=lang) for lang in planners.analyses.multilingual_languages()],
        mix=out(planners.analyses.MULTILINGUAL_MIX),
    output:
        share_csv=out(planners.analyses.MULTILINGUAL_TABLE, table="vocabulary_share", ext="csv"),
        share_markdown=report(
            out(planners.analyses.MULTILINGUAL_TABLE, table="vocabulary_share", ext="md"),
            category="Analyses",
            labels={"analysis": "multilingual tokenizers: vocabulary share"},
        ),
        fertility_csv=out(planners.analyses.MULTILINGUAL_TABLE, table="fertility", ext="csv"),
        fertility_markdown=report(
            out(planners.analyses.MULTILINGUAL_TABLE, table="fertility", ext="md"),
            category="Analyses",
            labels={"analysis": "multilingual tokenizers: fertility"},
        ),
    params:
        **step("tokstudy.steps.analysis.multilingual_tables"),
        languages=planners.analyses.multilingual_languages(),
        tokenizers=[
            (j.tokenizer, j.size)
            for j in planners.analyses.multilingual_jobs() + planners.analyses.multilingual_comparisons()
        ],
    log:
        out(log_path("multilingual_tables")),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("multilingual_tables")
    resources:
        **planners.resources("multilingual_tables"),
    script:
        RUN_STEP


rule plot_multilingual:
    input:
        out(planners.analyses.MULTILINGUAL_TABLE, table="vocabulary_share", ext="csv"),
    output:
        png=report(
            out(planners.analyses.MULTILINGUAL_PLOT, ext="png"),
            category="Analyses",
            labels={"analysis": "multilingual tokenizers: vocabulary share (plot)"},
        ),
        pdf=out(planners.analyses.MULTILINGUAL_PLOT, ext="pdf"),
    params:
        **step("tokstudy.steps.analysis.plot_multilingual"),
    log:
        out(log_path("plot_multilingual")),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("plot_multilingual")
    resources:
        **planners.resources("plot_multilingual"),
    script:
        RUN_STEP


rule analysis_outputs:
    input:
        planners.analyses.targets(),


# Correlation analysis (planners.analyses.correlation, on whenever the study has a models: or nmt:
# section): intrinsic metrics of every cell against its downstream scores. NMT cells take
# the metrics of the NMT stage's own tokenizers (rule nmt_tokenizer_metrics).
rule nmt_tokenizer_metrics:
    input:
        tokenizer=out(planners.nmt.TOKENIZER),
        train=out(planners.nmt.SPLIT, split="train"),
        heldout=out(planners.nmt.SPLIT, split="test"),
    output:
        metrics=out(planners.analyses.NMT_METRICS),
        frequencies=out(planners.analyses.NMT_FREQUENCIES),
    wildcard_constraints:
        side=r"[a-z][a-z0-9_]*",
    params:
        **step("tokstudy.steps.analysis.nmt_tokenizer_metrics"),
        language=lambda w: w.side,
    log:
        out(log_path("nmt_tokenizer_metrics", planners.nmt.SIDE_CELL)),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("nmt_tokenizer_metrics")
    resources:
        **planners.resources("nmt_tokenizer_metrics"),
    script:
        RUN_STEP


rule correlation:
    input:
        metrics=out(planners.metrics.TABLE),
        model_results=out(planners.models.RESULTS_TABLE) if planners.models.models else [],
        nmt_scores=planners.nmt.score_files(),
        nmt_metrics=planners.analyses.nmt_metric_files(),
    output:
        csv=out(planners.analyses.CORRELATION, ext="csv"),
        markdown=report(
            out(planners.analyses.CORRELATION, ext="md"),
            category="Analyses",
            labels={"analysis": "intrinsic metrics vs downstream scores"},
        ),
        ranking_csv=out(planners.analyses.CORRELATION_RANKING, ext="csv"),
        ranking_markdown=report(
            out(planners.analyses.CORRELATION_RANKING, ext="md"),
            category="Analyses",
            labels={"analysis": "intrinsic metrics ranked per downstream score"},
        ),
        png=report(
            out(planners.analyses.CORRELATION_PLOT),
            category="Analyses",
            labels={"analysis": "intrinsic metrics vs downstream scores (plot)"},
        ),
        cells=out(planners.analyses.CORRELATION_CELLS, ext="csv"),
        cells_json=out(planners.analyses.CORRELATION_CELLS, ext="json"),
        mixed_csv=out(planners.analyses.CORRELATION_MIXED, ext="csv"),
        mixed_markdown=report(
            out(planners.analyses.CORRELATION_MIXED, ext="md"),
            category="Analyses",
            labels={"analysis": "pooled mixed model of downstream scores"},
        ),
    params:
        **step("tokstudy.steps.analysis.correlation"),
        metrics=planners.metrics.names,
        settings=planners.analyses.correlation_settings(),
        nmt_sides=planners.analyses.nmt_metric_sides(),
    log:
        out(log_path("correlation")),
    conda:
        "../../envs/report.yaml"
    threads: planners.threads("correlation")
    resources:
        **planners.resources("correlation"),
    script:
        RUN_STEP


rule correlation_outputs:
    input:
        planners.analyses.correlation_targets(),
