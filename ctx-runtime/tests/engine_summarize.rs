//! The summarising compactor: budget-checked requests to a `ChatModel`, splitting what does not
//! fit the summariser's window, and its use by the assembler.

mod engine_common;

use std::sync::{Arc, Mutex};

use ctx_runtime::compact::{CompactError, CompactRequest};
use ctx_runtime::engine::*;
use ctx_runtime::error::ErrorCode;
use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use engine_common::*;

/// A stand-in model: its "summary" is the first words of the text it is sent, and like a real
/// model it stops after `max_tokens` tokens — unless `overrun`, when it ignores the limit.
struct FakeModel {
    requests: Mutex<Vec<ChatRequest>>,
    overrun: bool,
    fail: bool,
}

impl FakeModel {
    fn new(overrun: bool, fail: bool) -> Arc<Self> {
        Arc::new(FakeModel { requests: Mutex::new(Vec::new()), overrun, fail })
    }

    fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl ChatModel for FakeModel {
    fn model_name(&self) -> &str {
        "fake-summariser"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        if self.fail {
            return Err(ModelError::Failed { model: "fake-summariser".into(), message: "overloaded".into() });
        }
        let text = request.messages.last().map(|m| m.content.clone()).unwrap_or_default();
        let summary = format!("Summary: {}", text.split_whitespace().take(200).collect::<Vec<_>>().join(" "));
        let content = if self.overrun { summary } else { counter().truncate_to(&summary, request.max_tokens).unwrap() };
        Ok(ChatResponse::new(content))
    }
}

fn every_request_fits(model: &FakeModel, window: usize) {
    let requests = model.requests();
    assert!(!requests.is_empty());
    for r in requests {
        let prompt = counter().count_messages(&r.messages).unwrap();
        assert_eq!(r.predicted_prompt_tokens, Some(prompt));
        assert!(prompt + r.max_tokens <= window, "{prompt} + {} > {window}", r.max_tokens);
        assert_eq!(r.messages[0].content, DEFAULT_SUMMARY_INSTRUCTIONS);
        assert_eq!(r.step_id.as_deref(), Some("context_engine.compact.notes"));
    }
}

fn long_text(words: usize) -> String {
    (0..words).map(|i| format!("fact{i}")).collect::<Vec<_>>().join(" ")
}

fn compact_with(model: Arc<FakeModel>, window: usize, text: &str, max_tokens: usize) -> Result<String, CompactError> {
    let c = counter();
    let summarizer = Summarizer::new(model, window);
    block_on(summarizer.summarize(&CompactRequest::new("notes", text, &c).with_max_tokens(max_tokens)))
}

#[test]
fn one_request_when_the_text_fits_the_window() {
    let model = FakeModel::new(false, false);
    let out = compact_with(model.clone(), 4_096, &long_text(300), 40).unwrap();
    assert_eq!(model.requests().len(), 1);
    assert_eq!(model.requests()[0].max_tokens, 40);
    assert!(out.starts_with("Summary: fact0 fact1"));
    assert!(counter().count(&out).unwrap() <= 40);
    every_request_fits(&model, 4_096);
}

#[test]
fn a_text_larger_than_the_window_is_split_into_fitting_pieces() {
    let model = FakeModel::new(false, false);
    let text = long_text(400);
    let window = 200;
    let out = compact_with(model.clone(), window, &text, 30).unwrap();
    let requests = model.requests();
    assert!(requests.len() >= 4, "{} requests", requests.len());
    every_request_fits(&model, window);
    // The pieces are the text, in order, cut at token boundaries.
    let pieces: Vec<_> =
        requests.iter().take_while(|r| r.max_tokens < 30).map(|r| r.messages[1].content.clone()).collect();
    assert_eq!(pieces.concat(), text);
    assert!(counter().count(&out).unwrap() <= 30);
}

#[test]
fn an_overlong_reply_is_cut_to_the_budget() {
    let model = FakeModel::new(true, false);
    let out = compact_with(model, 4_096, &long_text(300), 25).unwrap();
    assert_eq!(counter().count(&out).unwrap(), 25);
}

#[test]
fn text_that_already_fits_is_not_sent() {
    let model = FakeModel::new(false, false);
    assert_eq!(compact_with(model.clone(), 4_096, "short note", 25).unwrap(), "short note");
    assert_eq!(compact_with(model.clone(), 4_096, "short note", 0).unwrap(), "");
    assert!(model.requests().is_empty());
}

#[test]
fn a_window_too_small_for_the_instructions_is_an_error() {
    let model = FakeModel::new(false, false);
    let err = compact_with(model.clone(), 50, &long_text(300), 40).unwrap_err();
    assert!(matches!(err, CompactError::WindowTooSmall { window: 50, output_tokens: 40, .. }), "{err:?}");
    assert_eq!(err.code(), "COMPACTOR_WINDOW_TOO_SMALL");
    assert!(model.requests().is_empty(), "nothing is sent that does not fit");
}

#[test]
fn summarizers_and_compactors_share_one_namespace() {
    let model = FakeModel::new(false, false);
    let summarizer = || Summarizer::new(model.clone(), 4_096);
    let noop = || -> std::sync::Arc<dyn ctx_runtime::compact::Compactor> {
        std::sync::Arc::new(ctx_runtime::compact::TruncateCompactor)
    };
    let build = |b: ContextAssemblerBuilder| match b.retriever("notes", CorpusRetriever::new(&[], false)).build() {
        Err(EngineError::Config(issues)) => issues.issues.iter().map(|i| (i.code.as_str(), i.to_string())).collect(),
        other => panic!("{other:?}"),
    };
    // A built-in name, a name taken twice (by a summariser and by a compactor), a bad name.
    let found: Vec<(&str, String)> = build(
        ContextAssembler::builder(notes_spec(), counter())
            .summarizer("truncate", summarizer())
            .summarizer("summarize", summarizer())
            .compactor("summarize", noop())
            .summarizer("no way", summarizer()),
    );
    let codes: Vec<&str> = found.iter().map(|(c, _)| *c).collect();
    assert_eq!(codes, ["COMPACTOR_BUILTIN", "COMPACTOR_DUPLICATE", "COMPACTOR_BAD_NAME"], "{found:?}");
    assert!(found[1].1.contains("compactors[0]"), "reported at the declaration: {found:?}");
    // A declared name left unregistered, next to one registered by a near name.
    let found = build(ContextAssembler::builder(notes_spec(), counter()).summarizer("sumarize", summarizer()));
    assert_eq!(found[0].0, "ENGINE_COMPACTOR_NOT_REGISTERED");
    assert!(found[0].1.contains("did you mean `sumarize`"), "{found:?}");
}

fn notes_spec() -> EngineSpec {
    let policy = ContextPolicySpec {
        compactor: Some(CompactorSpec { name: "summarize".into() }),
        ..budget_policy(70, "compact")
    };
    EngineSpec {
        contexts: vec![ContextDeclaration {
            name: "c".into(),
            inputs: vec!["question".into()],
            policy: Some(policy),
            messages: vec![system("Use the notes."), pack("notes"), user("{input.question}")],
        }],
        retrievers: vec![RetrieverDecl { name: "notes".into(), query: "{input.question}".into(), limit: 2 }],
        compactors: vec!["summarize".into()],
    }
}

fn assemble(model: Arc<FakeModel>) -> Result<ContextAssembly, EngineError> {
    let docs = [("n1", "fact1 short note."), ("n2", &*long_text(150))];
    let asm = ContextAssembler::builder(notes_spec(), counter())
        .retriever("notes", CorpusRetriever::new(&docs, false))
        .summarizer("summarize", Summarizer::new(model, 4_096))
        .build()?;
    block_on(asm.assemble("c", &AssemblyInput::new().input("question", "fact1")))
}

#[test]
fn the_assembler_summarises_what_does_not_fit() {
    let model = FakeModel::new(false, false);
    let out = assemble(model.clone()).unwrap();
    let pack = &out.report.packs[0];
    // The first block fits whole; the second is summarised into the room left.
    assert_eq!(pack.included, ["n1"]);
    assert!(pack.compacted);
    assert_eq!(pack.compactions, model.requests().len());
    assert!(
        out.system_prompt.starts_with("Use the notes.\n\nfact1 short note.\n\nSummary: fact0 fact1"),
        "{}",
        out.system_prompt
    );
    assert!(out.report.total_tokens <= 70);
    every_request_fits(&model, 4_096);
}

#[test]
fn a_failing_model_is_a_compactor_error() {
    let err = assemble(FakeModel::new(false, true)).unwrap_err();
    assert_eq!(err.code(), "ENGINE_COMPACTOR_FAILED");
    assert_eq!(
        err.to_string(),
        "context `c`: compactor `summarize` failed on pack `notes`: model `fake-summariser` call failed: overloaded"
    );
}
