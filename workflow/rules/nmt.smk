localrules: nmt_joint_text, nmt_report  # trivial jobs: not worth a cluster job


from tokstudy.study.nmt import CLDR_CORPUS, RUN, SCORE, SPLIT_DIR, TOKENIZER, TRANSLATION
from tokstudy.training.config import to_dict

# The NMT stage (config key nmt:): split a parallel corpus, train source and target
# tokenizers on its training side, one Transformer per direction × tokenizer × size × seed,
# beam-search the test set, score detokenized output with sacreBLEU, Table 1 and examples.
nmt_plan = planners.nmt


wildcard_constraints:
    direction=r"[a-z][a-z0-9_]*-[a-z][a-z0-9_]*",
    side=r"[a-z][a-z0-9_]*",


rule nmt_cldr_corpus:
    output:
        out(CLDR_CORPUS),
    params:
        languages=list(nmt_plan.languages),
    log:
        out("logs/nmt_cldr_corpus.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("nmt_cldr_corpus")
    resources:
        **planners.resources("nmt_cldr_corpus"),
    script:
        "../scripts/nmt_cldr_corpus.py"


rule nmt_split:
    input:
        nmt_plan.corpus_inputs(),
    output:
        **nmt_plan.split_outputs(),
    params:
        languages=list(nmt_plan.languages),
        split=to_dict(nmt_plan.config.split),
    log:
        out("logs/nmt_split.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("nmt_split")
    resources:
        **planners.resources("nmt_split"),
    script:
        "../scripts/nmt_split.py"


rule nmt_joint_text:
    input:
        [out(f"{SPLIT_DIR}/train.{language}") for language in nmt_plan.languages],
    output:
        out(f"{SPLIT_DIR}/train.joint"),
    params:
        languages=list(nmt_plan.languages),
    log:
        out("logs/nmt_joint_text.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("nmt_joint_text")
    resources:
        **planners.resources("nmt_joint_text"),
    script:
        "../scripts/nmt_joint_text.py"


rule nmt_train_tokenizer:
    input:
        train=out(f"{SPLIT_DIR}/train.{{side}}"),
    output:
        directory(out(TOKENIZER)),
    params:
        spec=lambda w: nmt_plan.train_spec(w.side, w.tokenizer, w.size),
    log:
        out("logs/nmt_train_tokenizer/{side}/{tokenizer}/{size}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("nmt_train_tokenizer")
    resources:
        **planners.resources("nmt_train_tokenizer"),
    script:
        "../scripts/nmt_train_tokenizer.py"


rule nmt_train:
    input:
        split=rules.nmt_split.output.summary,
        source_tokenizer=lambda w: out(nmt_plan.tokenizer_path(w, "source")),
        target_tokenizer=lambda w: out(nmt_plan.tokenizer_path(w, "target")),
    output:
        directory(out(RUN)),
    params:
        config=lambda w: nmt_plan.seeded_training(w.seed),
    log:
        out("logs/nmt_train/{direction}/{tokenizer}/{size}/seed{seed}.log"),
    conda:
        "../../envs/gpu.yaml"
    threads: planners.threads("nmt_train")
    resources:
        **planners.resources("nmt_train"),
    script:
        "../scripts/nmt_train.py"


rule nmt_translate:
    input:
        run=out(RUN),
        split=rules.nmt_split.output.summary,
        source_tokenizer=lambda w: out(nmt_plan.tokenizer_path(w, "source")),
        target_tokenizer=lambda w: out(nmt_plan.tokenizer_path(w, "target")),
    output:
        out(TRANSLATION),
    params:
        decode=to_dict(nmt_plan.config.decode),
    log:
        out("logs/nmt_translate/{direction}/{tokenizer}/{size}/seed{seed}.log"),
    conda:
        "../../envs/gpu.yaml"
    threads: planners.threads("nmt_translate")
    resources:
        **planners.resources("nmt_translate"),
    script:
        "../scripts/nmt_translate.py"


rule nmt_score:
    input:
        hypotheses=out(TRANSLATION),
        split=rules.nmt_split.output.summary,
        target_tokenizer=lambda w: out(nmt_plan.tokenizer_path(w, "target")),
    output:
        out(SCORE),
    log:
        out("logs/nmt_score/{direction}/{tokenizer}/{size}/seed{seed}.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("nmt_score")
    resources:
        **planners.resources("nmt_score"),
    script:
        "../scripts/nmt_score.py"


rule nmt_report:
    input:
        nmt_plan.score_files(),
    output:
        **{
            name: report(path, category="NMT", labels={"table": name})
            if path.endswith(".md")
            else path
            for name, path in nmt_plan.report_outputs().items()
        },
    params:
        evaluation=to_dict(nmt_plan.config.evaluation),
    log:
        out("logs/nmt_report.log"),
    conda:
        "../../envs/core.yaml"
    threads: planners.threads("nmt_report")
    resources:
        **planners.resources("nmt_report"),
    script:
        "../scripts/nmt_report.py"


rule nmt_outputs:
    input:
        planners.nmt.targets(),
