localrules: nmt_joint_text, nmt_report  # trivial jobs: not worth a cluster job


from tokstudy.workflow.nmt.plan import JOINT
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
        out_path=out(nmt_plan.CLDR_CORPUS),
    params:
        **step("tokstudy.nmt.cldr:write_cldr_corpus"),
        languages=list(nmt_plan.languages),
    log:
        out(log_path("nmt_cldr_corpus")),
    threads: planners.threads("nmt_cldr_corpus")
    resources:
        **planners.resources("nmt_cldr_corpus"),
    script:
        RUN_STEP


rule nmt_split:
    input:
        sources=nmt_plan.corpus_inputs(),
    output:
        **nmt_plan.split_outputs(),
    params:
        **step("tokstudy.nmt.data:split_corpus"),
        languages=list(nmt_plan.languages),
        out_dir=lambda w, output: folder(output.summary),
        config=to_dict(nmt_plan.config.split),
    log:
        out(log_path("nmt_split")),
    threads: planners.threads("nmt_split")
    resources:
        **planners.resources("nmt_split"),
    script:
        RUN_STEP


rule nmt_joint_text:
    input:
        [out(nmt_plan.SPLIT, split="train", side=language) for language in nmt_plan.languages],
    output:
        out_path=out(nmt_plan.SPLIT, split="train", side=JOINT),
    params:
        **step("tokstudy.nmt.data:joint_training_text"),
        languages=list(nmt_plan.languages),
        split_dir=lambda w, output: folder(output.out_path),
    log:
        out(log_path("nmt_joint_text")),
    threads: planners.threads("nmt_joint_text")
    resources:
        **planners.resources("nmt_joint_text"),
    script:
        RUN_STEP


rule nmt_train_tokenizer:
    input:
        train=out(nmt_plan.SPLIT, split="train"),
    output:
        out_dir=directory(out(nmt_plan.TOKENIZER)),
    params:
        **step("tokstudy.tokenizers.build:train_to_directory"),
        spec=lambda w: nmt_plan.train_spec(w.side, w.tokenizer, w.size),
    log:
        out(log_path("nmt_train_tokenizer", nmt_plan.SIDE_CELL)),
    threads: planners.threads("nmt_train_tokenizer")
    resources:
        **planners.resources("nmt_train_tokenizer"),
    script:
        RUN_STEP


rule nmt_train:
    input:
        split=rules.nmt_split.output.summary,
        source_tokenizer_dir=lambda w: out(nmt_plan.tokenizer_path(w, "source")),
        target_tokenizer_dir=lambda w: out(nmt_plan.tokenizer_path(w, "target")),
    output:
        out_dir=directory(out(nmt_plan.RUN)),
    params:
        **step("tokstudy.nmt.runs:train"),
        split_dir=lambda w, input: folder(input.split),
        config=lambda w: nmt_plan.seeded_training(w.seed),
        checkpoints=checkpoints("nmt_train", nmt_plan.RUN),
    log:
        out(log_path("nmt_train", nmt_plan.RUN_CELL)),
    threads: planners.threads("nmt_train")
    resources:
        **planners.resources("nmt_train"),
    script:
        RUN_STEP


rule nmt_translate:
    input:
        run_dir=out(nmt_plan.RUN),
        split=rules.nmt_split.output.summary,
        source_tokenizer_dir=lambda w: out(nmt_plan.tokenizer_path(w, "source")),
        target_tokenizer_dir=lambda w: out(nmt_plan.tokenizer_path(w, "target")),
    output:
        out_path=out(nmt_plan.TRANSLATION),
    params:
        **step("tokstudy.nmt.runs:translate_split"),
        split_dir=lambda w, input: folder(input.split),
        config=to_dict(nmt_plan.config.decode),
    log:
        out(log_path("nmt_translate", nmt_plan.RUN_CELL)),
    threads: planners.threads("nmt_translate")
    resources:
        **planners.resources("nmt_translate"),
    script:
        RUN_STEP


rule nmt_score:
    input:
        hypotheses_path=out(nmt_plan.TRANSLATION),
        split=rules.nmt_split.output.summary,
        target_tokenizer_dir=lambda w: out(nmt_plan.tokenizer_path(w, "target")),
    output:
        out_json=out(nmt_plan.SCORE),
    params:
        **step("tokstudy.nmt.scoring:score_run"),
        split_dir=lambda w, input: folder(input.split),
    log:
        out(log_path("nmt_score", nmt_plan.RUN_CELL)),
    threads: planners.threads("nmt_score")
    resources:
        **planners.resources("nmt_score"),
    script:
        RUN_STEP


rule nmt_report:
    input:
        score_files=nmt_plan.score_files(),
    output:
        **{
            name: report(path, category="NMT", labels={"table": name})
            if path.endswith(".md")
            else path
            for name, path in nmt_plan.report_outputs().items()
        },
    params:
        **step("tokstudy.nmt.report:write_report"),
        out_dir=lambda w, output: folder(output.qualitative),
        config=to_dict(nmt_plan.config.evaluation),
    log:
        out(log_path("nmt_report")),
    threads: planners.threads("nmt_report")
    resources:
        **planners.resources("nmt_report"),
    script:
        RUN_STEP


# intrinsic metrics of an NMT tokenizer on its side's split (for analyses.correlation)
rule nmt_tokenizer_metrics:
    input:
        tokenizer_dir=out(planners.nmt.TOKENIZER),
        train=out(planners.nmt.SPLIT, split="train"),
        heldout=out(planners.nmt.SPLIT, split="test"),
    output:
        metrics=out(planners.nmt.TOKENIZER_METRICS),
        frequencies=out(planners.nmt.TOKENIZER_FREQUENCIES),
    wildcard_constraints:
        side=r"[a-z][a-z0-9_]*",
    params:
        **step("tokstudy.workflow.cell_job:score_saved_tokenizer"),
        language=lambda w: w.side,
    log:
        out(log_path("nmt_tokenizer_metrics", planners.nmt.SIDE_CELL)),
    threads: planners.threads("nmt_tokenizer_metrics")
    resources:
        **planners.resources("nmt_tokenizer_metrics"),
    script:
        RUN_STEP


rule nmt_outputs:
    input:
        planners.nmt.targets(),
