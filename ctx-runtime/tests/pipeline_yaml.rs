//! YAML pipeline files (`pipeline::yaml`): every example of the specification loads unchanged
//! and runs; broken files report each problem at its file, line and column, with its code.

mod pipeline_support;

use std::path::{Path, PathBuf};

use ctx_runtime::ErrorCode;
use ctx_runtime::llm::offline::OfflineModel;
use ctx_runtime::pipeline::yaml::{PipelineFile, PipelineFileError};
use ctx_runtime::pipeline::{LoadOptions, LoadedPipeline, StepEnv, StepKind};
use ctx_runtime::state::PipelineState;
use ctx_runtime::validation::FieldPath;
use pipeline_support::{Corpus, WordSearch};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pipelines").join(name)
}

fn load_err(name: &str) -> PipelineFileError {
    PipelineFile::load(data(name)).expect_err(name)
}

/// Each issue as (file name, line, column, code).
fn located(err: &PipelineFileError) -> Vec<(String, usize, usize, &'static str)> {
    err.issues()
        .iter()
        .map(|i| (i.file.file_name().unwrap().to_string_lossy().into_owned(), i.line, i.column, i.code.as_str()))
        .collect()
}

/// The YAML examples of `manage_context_budget.md`, as the specification writes them.
const SPEC_COMPACT_CODE: &str = "compact_code:
  rules:
    - language: sql
      policy: demand
      inbox_key: compact_sql
    - language: sql
      policy: threshold
      threshold: 0.4
    - language: dotnet
      policy: always
";
const SPEC_MINIMAL: &str = "- id: manage_budget
  action: manage_context_budget
  on_ok: call_model_answer
  on_over: call_summarize_context
";
const SPEC_DIVIDER: &str = "divide_new_content: \"<<<New content\"";
const SPEC_DEMAND: &str = "- id: manage_budget
  action: manage_context_budget
  compact_code:
    rules:
      - language: sql
        policy: demand
        inbox_key: compact_sql
      - language: sql
        policy: threshold
        threshold: 0.4
      - language: dotnet
        policy: always
  on_ok: call_model_answer
  on_over: call_summarize_context
";
const SPEC_LOOP: &str = r####"- id: manage_budget
  action: manage_context_budget
  on_ok: call_model_answer
  on_over: budget_loop_guard

- id: budget_loop_guard
  action: loop_guard
  max_turn_loops_from_settings: "max_turn_loops"
  on_allow: call_summarize_context
  on_deny: call_model_answer

- id: call_summarize_context
  action: call_model
  prompt_key: "sumarizer"
  max_output_tokens: 2000
  user_parts:
    context:
      source: context_blocks
      template: "### Context:\n{}\n\n"
    user_question:
      source: user_question_en
      template: "### User:\n{}\n\n"
  next: set_context_from_summary

- id: set_context_from_summary
  action: set_variables
  rules:
    - set: context_blocks
      from: last_model_response
      transform: to_context_blocks
    - set: last_model_response
      value: null
  next: manage_budget
"####;

const EXAMPLES: [&str; 3] = ["compaction_loop.yaml", "minimal.yaml", "demand_threshold_always.yaml"];

#[test]
fn the_fixtures_hold_the_spec_examples_verbatim_and_match_the_examples_directory() {
    let text = |name: &str| std::fs::read_to_string(data(name)).unwrap();
    assert!(text("compaction_loop.yaml").contains(SPEC_LOOP));
    assert!(text("minimal.yaml").contains(SPEC_MINIMAL));
    assert!(text("minimal.yaml").contains(SPEC_DIVIDER));
    assert!(text("demand_threshold_always.yaml").contains(SPEC_DEMAND));
    let indented: String = SPEC_COMPACT_CODE.lines().map(|l| format!("  {l}\n")).collect();
    assert!(text("demand_threshold_always.yaml").contains(&indented));
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/pipelines");
    for name in EXAMPLES.iter().chain(&["config.json", "prompts/answer.txt", "prompts/sumarizer.txt"]) {
        let copy = std::fs::read_to_string(examples.join(name)).unwrap();
        assert_eq!(copy, text(name), "examples/pipelines/{name} is a copy of the fixture");
    }
}

#[test]
fn every_spec_example_loads_with_its_locations_and_files() {
    for name in EXAMPLES {
        let file = PipelineFile::load(data(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let def = file.definition();
        let budget = def.steps.iter().find(|s| s.id == "manage_budget").unwrap();
        assert_eq!(budget.kind.keyword(), "manage_context_budget");
        let files: Vec<String> =
            file.files().iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(files, [name, "sumarizer.txt", "answer.txt", "config.json"]);
        // The root and every step are located.
        let root = file.locations().get(&FieldPath::root()).unwrap();
        assert_eq!(root.column, 1, "{name}");
        for i in 0..def.steps.len() {
            let at = file.locations().get(&FieldPath::root().key("steps").index(i)).unwrap();
            assert_eq!(at.column, 3, "{name}: step {i}");
        }
        // Prompt files are read relative to the YAML file.
        assert!(def.prompts.iter().all(|p| p.text.as_deref().is_some_and(|t| !t.is_empty())));
    }
    let demand = PipelineFile::load(data("demand_threshold_always.yaml")).unwrap();
    let StepKind::ManageContextBudget(spec) = &demand.definition().steps[2].kind else { panic!() };
    assert_eq!(spec.compact_code.len(), 3);
    assert_eq!((spec.compact_code[1].policy.as_str(), spec.compact_code[1].threshold), ("threshold", Some(0.4)));
    let at = demand.locations().get(&FieldPath::parse("steps[2].compact_code[1].threshold")).unwrap();
    assert_eq!((at.line, at.column), (31, 20));
    let minimal = PipelineFile::load(data("minimal.yaml")).unwrap();
    let StepKind::ManageContextBudget(spec) = &minimal.definition().steps[2].kind else { panic!() };
    assert_eq!(spec.divide_new_content.as_deref(), Some("<<<New content"));
    // The spec's `max_tokens` of fetch_node_texts is the evidence budget.
    let looped = PipelineFile::load(data("compaction_loop.yaml")).unwrap();
    let StepKind::FetchNodeTexts(fetch) = &looped.definition().steps[1].kind else { panic!() };
    assert_eq!(fetch.evidence_tokens, 3000);
    let StepKind::CallModel(call) = &looped.definition().steps[4].kind else { panic!() };
    assert_eq!(
        call.user_parts.iter().map(|p| p.source.as_str()).collect::<Vec<_>>(),
        ["context_blocks", "user_question_en"]
    );
}

#[tokio::test]
async fn the_compaction_loop_runs_with_the_offline_model() {
    let file = PipelineFile::load(data("compaction_loop.yaml")).unwrap();
    let p = LoadedPipeline::load_file(&file, LoadOptions::new()).unwrap();
    let corpus = Corpus::invoicing();
    let search = WordSearch(&corpus);
    let model = OfflineModel::new(p.counter().clone());
    let env = StepEnv::builder().search(&search).store(&corpus).model(&model);
    let (state, reports) = p.run(PipelineState::new("How is the invoice tax total computed?"), &env).await.unwrap();
    let ids: Vec<&str> = reports.iter().map(|r| r.step_id.as_str()).collect();
    assert_eq!(ids, ["search", "fetch", "manage_budget", "call_model_answer"]);
    assert!(state.last_model_response.is_some_and(|a| !a.is_empty()));
    assert!(!state.context_blocks.is_empty());
}

#[test]
fn extends_merges_settings_and_steps_and_keeps_base_locations() {
    let file = PipelineFile::load(data("extends_child.yaml")).unwrap();
    let def = file.definition();
    assert_eq!(def.name, "CompactionLoopSmall");
    assert_eq!(def.settings.max_context_tokens, Some(4000));
    assert_eq!(def.settings.extra.get("max_turn_loops"), Some(&3));
    let ids: Vec<&str> = def.steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "search",
            "fetch",
            "manage_budget",
            "budget_loop_guard",
            "call_summarize_context",
            "set_context_from_summary",
            "call_model_answer"
        ]
    );
    let StepKind::CallModel(answer) = &def.steps[6].kind else { panic!() };
    assert_eq!((answer.max_output_tokens, answer.params.temperature), (Some(600), Some(0.2)));
    let at = |p: &str| {
        let l = file.locations().get(&FieldPath::parse(p)).unwrap();
        (l.file.file_name().unwrap().to_string_lossy().into_owned(), l.line, l.column)
    };
    assert_eq!(at("settings.max_context_tokens"), ("extends_child.yaml".into(), 6, 23));
    assert_eq!(at("settings.max_turn_loops"), ("compaction_loop.yaml".into(), 10, 19));
    assert_eq!(at("steps[1].evidence_tokens"), ("compaction_loop.yaml".into(), 22, 15));
    assert_eq!(at("steps[6].max_output_tokens"), ("extends_child.yaml".into(), 11, 22));
    assert_eq!(file.files().iter().filter(|f| f.extension().is_some_and(|e| e == "yaml")).count(), 2);
}

#[test]
fn an_unknown_key_is_reported_once_with_a_suggestion() {
    let err = load_err("broken/unknown_key.yaml");
    assert_eq!(
        located(&err),
        // One problem for one mistake: `next`, which `nxet` misspells, is not also reported
        // missing (as the `pipeline!` macro does).
        [("unknown_key.yaml".into(), 12, 3, "YAML_UNKNOWN_KEY")]
    );
    let first = &err.issues()[0];
    assert!(
        first.message.starts_with("unknown key `nxet` in step `answer`; expected one of `id`, `action`"),
        "{first}"
    );
    assert!(first.message.ends_with("did you mean `next`?"), "{first}");
    assert_eq!(err.code(), "YAML_UNKNOWN_KEY");
}

#[test]
fn wrong_types_are_all_reported() {
    let err = load_err("broken/wrong_type.yaml");
    // The file also searches without fetching, a mistake of its own, reported in the same pass.
    assert_eq!(
        located(&err),
        [
            ("wrong_type.yaml".into(), 10, 10, "YAML_WRONG_TYPE"),
            ("wrong_type.yaml".into(), 15, 22, "YAML_WRONG_TYPE"),
            ("wrong_type.yaml".into(), 8, 7, "DATAFLOW_HITS_UNUSED")
        ]
    );
    assert_eq!(err.issues()[1].message, "`max_output_tokens` in step `answer` must be an integer, found a string");
    // Issues of more than one code: the load's own code says the file is invalid.
    assert_eq!(err.code(), "PIPELINE_FILE_INVALID");
    let err: ctx_runtime::CtxError = err.into();
    assert_eq!(err.code(), "PIPELINE_FILE_INVALID");
}

#[test]
fn a_syntax_error_is_located() {
    let err = load_err("broken/syntax.yaml");
    assert_eq!(located(&err), [("syntax.yaml".into(), 11, 3, "YAML_SYNTAX")]);
}

#[test]
fn a_contract_violation_has_the_compile_errors_code_message_and_help_at_the_step() {
    let err = load_err("broken/contract.yaml");
    assert_eq!(located(&err), [("contract.yaml".into(), 8, 3, "BUDGET_CONTRACT_VIOLATED")]);
    // The same issue as validate_definition reports for the definition itself.
    let text = std::fs::read_to_string(data("broken/contract.yaml")).unwrap().replace("5000\n  next", "500\n  next");
    let ok = PipelineFile::parse(&text, data("broken/contract.yaml")).unwrap();
    let mut def = ok.into_definition();
    let StepKind::CallModel(call) = &mut def.steps[0].kind else { panic!() };
    call.max_output_tokens = Some(5000);
    let issues = ctx_runtime::pipeline::validate_definition(&def, &Default::default());
    assert_eq!(issues.len(), 1);
    let issue = &err.issues()[0];
    assert_eq!(
        (issue.code.as_str(), &issue.message, &issue.help),
        (issues[0].code.as_str(), &issues[0].message, &issues[0].help)
    );
}

#[test]
fn problems_in_a_base_file_point_into_the_base_file() {
    let err = load_err("broken/child_bad_threshold.yaml");
    assert_eq!(located(&err), [("base_bad_threshold.yaml".into(), 14, 20, "COMPACT_RULE_THRESHOLD_OUT_OF_RANGE")]);
    let err = load_err("broken/child_bad_key.yaml");
    assert_eq!(located(&err), [("base_bad_key.yaml".into(), 5, 3, "YAML_UNKNOWN_KEY")]);
    assert!(err.issues()[0].message.contains("did you mean `max_output_tokens`?"));
}

#[test]
fn extends_cycles_and_missing_files_name_the_chain() {
    let err = load_err("broken/cycle_a.yaml");
    assert_eq!(located(&err), [("cycle_b.yaml".into(), 1, 10, "YAML_EXTENDS_CYCLE")]);
    assert_eq!(err.issues()[0].message, "`extends` chain cycle_a.yaml → cycle_b.yaml → cycle_a.yaml");
    let err = load_err("broken/missing_base.yaml");
    assert_eq!(located(&err), [("missing_base.yaml".into(), 3, 5, "PIPELINE_FILE_UNREADABLE")]);
    assert!(err.issues()[0].message.contains("missing_base.yaml → nowhere.yaml"), "{}", err.issues()[0]);
    let err = load_err("broken/no_such_file.yaml");
    assert_eq!(located(&err), [("no_such_file.yaml".into(), 0, 0, "PIPELINE_FILE_UNREADABLE")]);

    // A chain longer than ctx follows, without a cycle: f0 extends f1 … extends f40.
    let dir = tempfile::tempdir().unwrap();
    for i in 0..40 {
        std::fs::write(dir.path().join(format!("f{i}.yaml")), format!("extends: f{}.yaml\nsteps: []\n", i + 1))
            .unwrap();
    }
    std::fs::write(dir.path().join("f40.yaml"), "steps: []\n").unwrap();
    let err = PipelineFile::load(dir.path().join("f0.yaml")).expect_err("too deep");
    assert!(err.issues().iter().any(|i| i.code == "YAML_EXTENDS_TOO_DEEP"), "{:?}", err.issues());
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    fn valid() -> String {
        std::fs::read_to_string(data("compaction_loop.yaml")).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let text = String::from_utf8_lossy(&bytes);
            let _ = PipelineFile::parse(&text, data("fuzz.yaml"));
        }

        #[test]
        fn on_mutations_of_a_valid_file(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..4, "[ -~\n]{0,6}"), 1..6)
        ) {
            let mut text = valid().into_bytes();
            for (at, op, insert) in edits {
                let i = at.index(text.len() + 1);
                match op {
                    0 => { text.splice(i..i, insert.bytes()); }
                    1 => { let end = (i + insert.len().max(1)).min(text.len()); text.drain(i..end); }
                    2 => { let end = (i + insert.len()).min(text.len()); text.splice(i..end, insert.bytes()); }
                    _ => { let line: Vec<u8> = text[..i].to_vec(); text.splice(i..i, line.into_iter().rev().take(40)); }
                }
            }
            let text = String::from_utf8_lossy(&text);
            if let Err(e) = PipelineFile::parse(&text, data("compaction_loop.yaml")) {
                prop_assert!(!e.issues().is_empty());
                for issue in e.issues() {
                    prop_assert!(!issue.message.is_empty());
                }
            }
        }
    }
}

#[test]
fn load_time_problems_are_located_too() {
    let text = std::fs::read_to_string(data("compaction_loop.yaml"))
        .unwrap()
        .replace("answer: { file: prompts/answer.txt }", "answer: null");
    let file = PipelineFile::parse(&text, data("compaction_loop.yaml")).unwrap();
    let err = LoadedPipeline::load_file(&file, LoadOptions::new()).unwrap_err();
    assert_eq!(located(&err), [("compaction_loop.yaml".into(), 61, 15, "MISSING_PROMPT_TEXT")]);
    let p =
        LoadedPipeline::load_file(&file, LoadOptions::new().prompt("answer", "Answer from the context only.")).unwrap();
    assert_eq!(p.name(), "CompactionLoop");
}

/// A step id written twice in a file that `extends` another is a duplicate, as in any other file
/// (issue 26, item 9): reported at the second step, in that file, not merged away.
#[test]
fn a_step_id_written_twice_under_extends_is_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("compaction_loop.yaml"), dir.path().join("compaction_loop.yaml")).unwrap();
    std::fs::copy(data("config.json"), dir.path().join("config.json")).unwrap();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir(&prompts).unwrap();
    for entry in std::fs::read_dir(data("prompts")).unwrap().flatten() {
        std::fs::copy(entry.path(), prompts.join(entry.file_name())).unwrap();
    }
    let child = "extends: compaction_loop.yaml\nsteps:\n\
                 - { id: call_model_answer, action: call_model, prompt_key: answer, max_output_tokens: 600, next: end }\n\
                 - { id: call_model_answer, action: call_model, prompt_key: answer, max_output_tokens: 500, next: end }\n";
    std::fs::write(dir.path().join("child.yaml"), child).unwrap();
    let err = PipelineFile::load(dir.path().join("child.yaml")).expect_err("a duplicate step id");
    let dup = err.issues().iter().find(|i| i.code == "DUPLICATE_STEP_ID").expect("DUPLICATE_STEP_ID");
    assert_eq!((dup.file.file_name().unwrap().to_str(), dup.line), (Some("child.yaml"), 4), "{dup:?}");
}
