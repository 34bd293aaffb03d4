//! `LoadedPipeline::load` runs the dataflow rules the macro and `ctx check` run: evidence no
//! request can carry fails the load at the fetch step (`DATAFLOW_EVIDENCE_UNUSED`), and what a
//! caller may still use loads with its warning kept (`DATAFLOW_RESPONSE_OVERWRITTEN`).

use ctx_runtime::ErrorCode;
use ctx_runtime::pipeline::{LoadOptions, LoadedPipeline};
use ctx_runtime::pipeline::{StepKind, UserPartSpec};
use ctx_spec::pipeline::testing::{call, def, fetch, search};

#[test]
fn the_loader_refuses_evidence_no_request_carries_and_keeps_the_dataflow_warnings() {
    // `answer` renders the question only: the fetched texts reach no request.
    let mut answer = call("answer", "answer", "end");
    if let StepKind::CallModel(c) = &mut answer.kind {
        c.user_parts = vec![UserPartSpec::new("user_question", "{}")];
    }
    let mut d = def(vec![search("search", "fetch"), fetch("fetch", "answer"), answer]);
    d.settings.max_history_tokens = None;
    let err = LoadedPipeline::load(d.clone(), LoadOptions::new()).unwrap_err();
    assert_eq!(err.code(), "DATAFLOW_EVIDENCE_UNUSED", "{err}");
    assert!(err.to_string().contains("steps[1].id") && err.to_string().contains("step `fetch`"), "{err}");

    // With the default parts the texts go into the context: it loads. A summary replaced by the
    // answer before anything reads it is a warning the loaded pipeline keeps.
    if let StepKind::CallModel(c) = &mut d.steps[2].kind {
        c.user_parts = Vec::new();
    }
    d.steps.insert(2, call("summarize", "summarizer", "answer"));
    d.steps[1] = fetch("fetch", "summarize");
    let loaded = LoadedPipeline::load(d, LoadOptions::new()).expect("loads");
    let warned: Vec<(&str, String)> = loaded.warnings().iter().map(|w| (w.code.as_str(), w.path.to_string())).collect();
    assert!(warned.contains(&("DATAFLOW_RESPONSE_OVERWRITTEN", "steps[2].id".to_owned())), "{warned:?}");
}
