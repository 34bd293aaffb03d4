use std::path::PathBuf;

use super::*;
use crate::codes::ErrorCode;
use crate::pipeline::Transition;
use crate::pipeline::testing::{self, codes, compaction_loop};

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("ctx-pipeline-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn config_issues(err: CtxError) -> Vec<(&'static str, String)> {
    match err {
        CtxError::Config(e) => codes(&e.issues),
        other => panic!("expected configuration issues, got {other}"),
    }
}

#[test]
fn loads_the_spec_loop_with_its_limits_and_bound() {
    let p = testing::loaded(compaction_loop());
    assert_eq!(p.first_step(), "search");
    assert_eq!(p.context_window(), 16_384);
    assert_eq!(p.max_context_tokens(), 9_000);
    assert_eq!(p.max_history_tokens(), Some(2_000));
    assert_eq!(p.setting("max_turn_loops"), Some(3));
    assert_eq!(p.output_tokens("summarize"), Some(1_024));
    assert_eq!(p.output_tokens("search"), None);
    assert_eq!(p.transition(2, Transition::OnOver), Some(("on_over", Target::Step(3))));
    assert_eq!(p.transition(6, Transition::Next), Some(("next", Target::End)));
    assert_eq!(p.prompt("summarizer"), Some("Summarise the context."));
    // The longest run: search, fetch, manage, guard, 3 × (summarize, set, manage, guard), answer
    // (was (3 + 1) × 5 = 20, the product bound), from any state, as a resumed run is held to it.
    assert_eq!(p.step_bound(), 17);
    // A run from an empty context never takes `on_over` (BUDGET_ON_OVER_NEVER_TAKEN): the answer
    // is its one request. When the context carries, 3 summaries and the answer are 4.
    assert_eq!(p.model_request_bound(), 1);
    let mut carried = compaction_loop();
    carried.settings.carry_context = Some(true);
    let carried = testing::loaded(carried);
    assert_eq!((carried.step_bound(), carried.model_request_bound()), (17, 4));
    assert!(p.contract_report().clamps.is_empty());
    assert!(p.check_steps_match(&compaction_loop()).is_ok());
    let mut other = compaction_loop();
    other.steps.pop();
    assert_eq!(p.check_steps_match(&other).unwrap_err().code(), "PIPELINE_STEPS_DIFFER");
}

#[test]
fn every_problem_is_one_config_error() {
    let mut def = compaction_loop();
    def.steps[0] = testing::search("search", "fetc");
    if let StepKind::FetchNodeTexts(f) = &mut def.steps[1].kind {
        f.evidence_tokens = 0;
    }
    let err = LoadedPipeline::load(def, LoadOptions::new()).unwrap_err();
    assert_eq!(err.code(), "CONFIG_INVALID");
    assert!(err.to_string().contains("pipeline `Test`"), "{err}");
    assert_eq!(
        config_issues(err),
        vec![
            ("UNKNOWN_STEP_TARGET", "steps[0].next".into()),
            ("INVALID_EVIDENCE_TOKENS", "steps[1].evidence_tokens".into())
        ]
    );
}

#[test]
fn prompts_come_from_the_definition_or_the_load_options() {
    let mut def = compaction_loop();
    def.prompts[1].text = None;
    let err = LoadedPipeline::load(def.clone(), LoadOptions::new()).unwrap_err();
    assert_eq!(config_issues(err), vec![("MISSING_PROMPT_TEXT", "steps[4].prompt_key".into())]);

    let p = LoadedPipeline::load(def.clone(), LoadOptions::new().prompt("summarizer", "Be short.")).unwrap();
    assert_eq!(p.prompt("summarizer"), Some("Be short."));

    let err = LoadedPipeline::load(
        def.clone(),
        LoadOptions::new().prompt("sumarizer", "x").prompt("answer", "y").prompt("summarizer", "z"),
    )
    .unwrap_err();
    let CtxError::Config(e) = err else { panic!() };
    assert_eq!(
        codes(&e.issues),
        vec![("UNKNOWN_PROMPT", "prompts.sumarizer".into()), ("PROMPT_ALREADY_DEFINED", "prompts.answer".into())]
    );
    assert!(e.issues[0].help.as_deref().unwrap().starts_with("did you mean `summarizer`?"));
    let twice = LoadOptions::new().prompt("summarizer", "a").prompt("summarizer", "b");
    let err = LoadedPipeline::load(def.clone(), twice).unwrap_err();
    assert_eq!(config_issues(err), vec![("PROMPT_PROVIDED_TWICE", "prompts.summarizer".into())]);

    let dir = TempDir::new("prompts");
    std::fs::write(dir.0.join("summarizer.txt"), "Summarise, keep SQL verbatim.").unwrap();
    let opts = LoadOptions::new().base_dir(&dir.0).prompt_file("summarizer", "summarizer.txt");
    let p = LoadedPipeline::load(def.clone(), opts).unwrap();
    assert_eq!(p.prompt("summarizer"), Some("Summarise, keep SQL verbatim."));
    let err = LoadedPipeline::load(def, LoadOptions::new().base_dir(&dir.0).prompt_file("summarizer", "nope.txt"))
        .unwrap_err();
    assert_eq!(err.code(), "PIPELINE_PROMPT_FILE");
    assert!(err.to_string().contains("nope.txt") && err.to_string().contains("`summarizer`"), "{err}");
}

/// A prompt too long for the window is reported under the prompt, naming the file it was read
/// from; it was once reported under the step that uses it, which does not say where the text is.
#[test]
fn a_prompt_file_too_long_for_the_window_is_reported_at_the_prompt_and_its_file() {
    let mut def = compaction_loop();
    def.prompts.iter_mut().find(|p| p.key == "summarizer").unwrap().text = None;
    let dir = TempDir::new("long-prompt");
    std::fs::write(dir.0.join("summarizer.txt"), "Summarise the context, every line of it. ".repeat(2_500)).unwrap();
    let opts = LoadOptions::new().base_dir(&dir.0).prompt_file("summarizer", "summarizer.txt");
    let CtxError::Config(e) = LoadedPipeline::load(def, opts).unwrap_err() else { panic!("a config error") };
    assert_eq!(codes(&e.issues), vec![("BUDGET_CONTRACT_VIOLATED", "prompts.summarizer".into())]);
    let message = &e.issues[0].message;
    assert!(message.contains("system prompt `summarizer` is too long"), "{message}");
    assert!(message.contains(&dir.0.join("summarizer.txt").display().to_string()), "{message}");
    assert!(e.issues[0].help.as_deref().unwrap().starts_with("shorten prompt `summarizer` by at least"));
}

#[test]
fn the_model_can_come_from_a_config_file() {
    let dir = TempDir::new("config");
    std::fs::write(
        dir.0.join("config.json"),
        r#"{ "model": "gpt-4o", "model_context_window": 32000, "model_max_tokens": 700 }"#,
    )
    .unwrap();
    let mut def = compaction_loop();
    def.model = ModelSource::ConfigFile("config.json".into());
    let p = LoadedPipeline::load(def.clone(), LoadOptions::new().base_dir(&dir.0)).unwrap();
    assert_eq!(p.context_window(), 32_000);
    assert_eq!(p.output_tokens("answer"), Some(700));
    assert_eq!(p.counter().backend_id(), crate::TokenCounter::for_encoding(crate::Encoding::O200kBase).backend_id());

    let err = LoadedPipeline::load(def, LoadOptions::new().base_dir(dir.0.join("missing"))).unwrap_err();
    assert_eq!(err.code(), "CONFIG_FILE_UNREADABLE");
    assert!(err.to_string().contains("config.json"), "{err}");
}

#[test]
fn auto_clamp_runs_with_the_clamped_limits() {
    let mut def = compaction_loop();
    if let ModelSource::Inline(m) = &mut def.model {
        m.context_window = Some(10_000);
    }
    let err = LoadedPipeline::load(def.clone(), LoadOptions::new()).unwrap_err();
    assert!(config_issues(err).iter().all(|(c, _)| *c == "BUDGET_CONTRACT_VIOLATED"));
    // A clamp fills the window: the question it clamps around needs a declared budget.
    let err = LoadedPipeline::load(def.clone(), LoadOptions::new().limits_policy("auto_clamp")).unwrap_err();
    assert!(config_issues(err).iter().any(|(c, _)| *c == "INPUT_BUDGET_NO_ROOM"));
    def.settings.max_question_tokens = Some(300);
    let p = LoadedPipeline::load(def, LoadOptions::new().limits_policy("auto_clamp")).unwrap();
    assert!(p.max_context_tokens() < 9_000, "{}", p.max_context_tokens());
    assert!(!p.contract_report().clamps.is_empty());
    assert_eq!(p.settings().max_context_tokens, p.max_context_tokens());
    for step in ["summarize", "answer"] {
        let budget = p.contract_report().step(step).unwrap();
        assert!(budget.total_tokens() <= 10_000, "{budget:?}");
    }
}

/// A tokenizer that is down: every count fails.
#[derive(Debug)]
struct Unavailable;

impl crate::tokens::TokenizerBackend for Unavailable {
    fn id(&self) -> &str {
        "unavailable"
    }
    fn count(&self, _: &str) -> Result<usize, crate::TokenError> {
        Err(crate::TokenError::Backend { backend: "unavailable".into(), reason: "down".into() })
    }
    fn encode(&self, text: &str) -> Result<Vec<u32>, crate::TokenError> {
        self.count(text).map(|_| Vec::new())
    }
    fn decode(&self, _: &[u32]) -> Result<String, crate::TokenError> {
        Ok(String::new())
    }
}

#[test]
fn what_cannot_be_counted_is_an_issue_at_its_step() {
    use crate::tokens::{ChatFormat, TokenCounter};
    let failing = || TokenCounter::with_backend(std::sync::Arc::new(Unavailable), ChatFormat::openai(), 16);
    let err = LoadedPipeline::load_with_counter(compaction_loop(), LoadOptions::new(), failing()).unwrap_err();
    assert!(config_issues(err).contains(&("PROMPT_COUNT_FAILED", "steps[4].prompt_key".into())));
    let agent = testing::def(vec![testing::agent("ask", "end")]);
    let err = LoadedPipeline::load_with_counter(agent, LoadOptions::new(), failing()).unwrap_err();
    let found = config_issues(err);
    assert!(found.contains(&("TOOL_COUNT_FAILED", "steps[0].tools".into())), "{found:?}");
}
