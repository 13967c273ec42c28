# Tokenization parity (tokstudy.analyses.parity): line-aligned held-out text, and premiums
# on the multi-parallel PUD corpus.


localrules: plot_parity_pud  # trivial jobs: not worth a cluster job


parity_plan = planners.analyses["parity"]


rule tokenization_parity:
    input:
        **parity_plan.texts(),
        reference_tokenizers=[planners.tokenizers.tokenizer_dir(a) for a, _ in parity_plan.pairs()],
        target_tokenizers=[planners.tokenizers.tokenizer_dir(b) for _, b in parity_plan.pairs()],
    output:
        csv=out(parity_plan.PARITY, ext="csv"),
        markdown=report(
            out(parity_plan.PARITY, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization parity"},
        ),
    params:
        **step("tokstudy.analyses.parity.tables:write_parity"),
        pairs=lambda w, input: {
            key: (reference, target)
            for key, reference, target in zip(
                [(a.tokenizer, a.size) for a, _ in parity_plan.pairs()],
                input.reference_tokenizers,
                input.target_tokenizers,
            )
        },
        reference=parity_plan.language("reference"),
        target=parity_plan.language("target"),
    log:
        out(log_path("tokenization_parity")),
    threads: planners.threads("tokenization_parity")
    resources:
        **planners.resources("tokenization_parity"),
    script:
        RUN_STEP


rule tokenization_parity_pud:
    input:
        corpora=list(parity_plan.files().values()),
        tokenizer_dirs=sorted({p.directory for p in parity_plan.tokenizers_scored()}),
    output:
        csv=out(parity_plan.PARITY_PUD, ext="csv"),
        markdown=report(
            out(parity_plan.PARITY_PUD, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization premium (PUD)"},
        ),
        fairness_csv=out(parity_plan.PARITY_PUD_FAIRNESS, ext="csv"),
        fairness_markdown=report(
            out(parity_plan.PARITY_PUD_FAIRNESS, ext="md"),
            category="Analyses",
            labels={"analysis": "tokenization premium fairness (PUD)"},
        ),
        json=out(parity_plan.PARITY_PUD, ext="json"),
    params:
        **step("tokstudy.analyses.parity.tables:write_parallel_parity"),
        corpus_files=lambda w, input: dict(zip(parity_plan.files(), input.corpora)),
        reference=parity_plan.language("reference"),
        tokenizers=[vars(p) for p in parity_plan.tokenizers_scored()],
    log:
        out(log_path("tokenization_parity_pud")),
    threads: planners.threads("tokenization_parity_pud")
    resources:
        **planners.resources("tokenization_parity_pud"),
    script:
        RUN_STEP


rule plot_parity_pud:
    input:
        table=out(parity_plan.PARITY_PUD, ext="csv"),
    output:
        heatmap_png=report(
            out(parity_plan.PARITY_PUD_PLOT, plot="heatmap", ext="png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (PUD): heat map"},
        ),
        heatmap_pdf=out(parity_plan.PARITY_PUD_PLOT, plot="heatmap", ext="pdf"),
        bars_png=report(
            out(parity_plan.PARITY_PUD_PLOT, plot="bars", ext="png"),
            category="Analyses",
            labels={"analysis": "tokenization premium (PUD): bars"},
        ),
        bars_pdf=out(parity_plan.PARITY_PUD_PLOT, plot="bars", ext="pdf"),
    params:
        **step("tokstudy.analyses.parity.plots:plot_premiums"),
        reference=parity_plan.language("reference"),
        heatmap=lambda w, output: [output.heatmap_png, output.heatmap_pdf],
        bars=lambda w, output: [output.bars_png, output.bars_pdf],
    log:
        out(log_path("plot_parity_pud")),
    threads: planners.threads("plot_parity_pud")
    resources:
        **planners.resources("plot_parity_pud"),
    script:
        RUN_STEP
