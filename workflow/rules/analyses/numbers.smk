# How tokenizers cut numbers (tokstudy.analyses.numbers).


localrules: plot_number_tokens  # trivial job: not worth a cluster job


numbers_plan = planners.analyses["numbers"]


rule number_tokens:
    input:
        tokenizer_dirs=sorted({e["directory"] for e in numbers_plan.tokenizers_scored()}),
        pud=numbers_plan.pud_files(),
        udhr=numbers_plan.udhr_files(),
    output:
        csv=out(numbers_plan.NUMBERS, ext="csv"),
        markdown=report(
            out(numbers_plan.NUMBERS, ext="md"),
            category="Analyses",
            labels={"analysis": "numbers"},
        ),
    params:
        **step("tokstudy.analyses.numbers.tables:write_numbers"),
        seed=study.seed,
        per_length=numbers_plan.settings.get("per_length"),
        tokenizers=numbers_plan.tokenizers_scored(),
    log:
        out(log_path("number_tokens")),
    threads: planners.threads("number_tokens")
    resources:
        **planners.resources("number_tokens"),
    script:
        RUN_STEP


rule plot_number_tokens:
    input:
        table=out(numbers_plan.NUMBERS, ext="csv"),
    output:
        png=report(
            out(numbers_plan.NUMBERS_PLOT, ext="png"),
            category="Analyses",
            labels={"analysis": "numbers: tokens per integer"},
        ),
        pdf=out(numbers_plan.NUMBERS_PLOT, ext="pdf"),
    params:
        **step("tokstudy.analyses.numbers.tables:plot_numbers"),
    log:
        out(log_path("plot_number_tokens")),
    threads: planners.threads("plot_number_tokens")
    resources:
        **planners.resources("plot_number_tokens"),
    script:
        RUN_STEP
