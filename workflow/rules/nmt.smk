localrules: nmt_joint_text, nmt_report  # trivial jobs: not worth a cluster job


from tokstudy.models.config import to_dict
from tokstudy.models.plan import slurm_extras
from tokstudy.nmt.plan import (
    CLDR_CORPUS,
    RUN,
    SCORE,
    SPLIT_DIR,
    TOKENIZER,
    TRANSLATION,
    NMTPlan,
)

# The NMT stage (config key nmt:): split a parallel corpus, train source and target
# tokenizers on its training side, one Transformer per direction × tokenizer × size × seed,
# beam-search the test set, score detokenized output with sacreBLEU, Table 1 and examples.
try:
    nmt_plan = NMTPlan(study)
except TokstudyError as exc:
    raise WorkflowError(f"config error: {exc}") from None


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
    threads: 1
    resources:
        mem_mb=resource("nmt_cldr_corpus", "mem_mb", 1000),
        runtime=resource("nmt_cldr_corpus", "runtime", 10),
    script:
        "../scripts/nmt_cldr_corpus.py"


rule nmt_split:
    input:
        nmt_plan.corpus_inputs(RESULTS),
    output:
        **nmt_plan.split_outputs(RESULTS),
    params:
        languages=list(nmt_plan.languages),
        split=to_dict(nmt_plan.config.split),
    log:
        out("logs/nmt_split.log"),
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=resource("nmt_split", "mem_mb", 4000),
        runtime=resource("nmt_split", "runtime", 30),
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
    threads: 1
    resources:
        mem_mb=resource("nmt_joint_text", "mem_mb", 2000),
        runtime=resource("nmt_joint_text", "runtime", 10),
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
    threads: resource("train_tokenizer", "threads", 1)
    resources:
        mem_mb=resource("train_tokenizer", "mem_mb", 4000),
        runtime=resource("train_tokenizer", "runtime", 60),
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
    threads: resource("nmt_train", "threads", 2)
    resources:
        mem_mb=resource("nmt_train", "mem_mb", 8000),
        runtime=resource("nmt_train", "runtime", 720),
        **slurm_extras(config, "nmt_train"),
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
    threads: resource("nmt_translate", "threads", 2)
    resources:
        mem_mb=resource("nmt_translate", "mem_mb", 4000),
        runtime=resource("nmt_translate", "runtime", 120),
        **slurm_extras(config, "nmt_translate"),
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
    threads: 1
    resources:
        mem_mb=resource("nmt_score", "mem_mb", 2000),
        runtime=resource("nmt_score", "runtime", 10),
    script:
        "../scripts/nmt_score.py"


rule nmt_report:
    input:
        nmt_plan.score_files(RESULTS),
    output:
        **{
            name: report(path, category="NMT", labels={"table": name})
            if path.endswith(".md")
            else path
            for name, path in nmt_plan.report_outputs(RESULTS).items()
        },
    params:
        evaluation=to_dict(nmt_plan.config.evaluation),
    log:
        out("logs/nmt_report.log"),
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=resource("nmt_report", "mem_mb", 4000),
        runtime=resource("nmt_report", "runtime", 30),
    script:
        "../scripts/nmt_report.py"


rule nmt_outputs:
    input:
        nmt_plan.targets(RESULTS),
