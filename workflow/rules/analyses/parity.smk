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
        **step("tokstudy.workflow.analyses.parity.steps.tokenization_parity"),
        pairs=[(a.tokenizer, a.size) for a, _ in parity_plan.pairs()],
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
        tokenizers=sorted({p.directory for p in parity_plan.tokenizers_scored()}),
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
        **step("tokstudy.workflow.analyses.parity.steps.tokenization_parity_pud"),
        languages=list(parity_plan.files()),
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
        out(parity_plan.PARITY_PUD, ext="csv"),
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
        **step("tokstudy.workflow.analyses.parity.steps.plot_parity_pud"),
        reference=parity_plan.language("reference"),
    log:
        out(log_path("plot_parity_pud")),
    threads: planners.threads("plot_parity_pud")
    resources:
        **planners.resources("plot_parity_pud"),
    script:
        RUN_STEP
