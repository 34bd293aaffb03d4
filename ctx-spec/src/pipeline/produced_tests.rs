use super::*;
use crate::pipeline::definition::{END, StepDef, UserPartSpec};
use crate::pipeline::testing::*;

fn errors(def: &PipelineDef) -> Vec<(&'static str, String)> {
    codes(&unconsumed_issues(def))
}

fn warnings(def: &PipelineDef) -> Vec<(&'static str, String)> {
    codes(&unconsumed_warnings(def))
}

/// `answer` with user parts that leave the context out.
fn question_only(id: &str, next: &str) -> StepDef {
    let mut step = call(id, "answer", next);
    if let StepKind::CallModel(c) = &mut step.kind {
        c.user_parts = vec![UserPartSpec::new("user_question", "{}")];
    }
    step
}

/// The README's first pipeline: the answer's default parts render the context, which takes the
/// fetched texts: nothing to say.
#[test]
fn search_fetch_answer_carries_the_evidence() {
    let mut answer = call("answer", "answer", END);
    if let StepKind::CallModel(c) = &mut answer.kind {
        c.user_parts = Vec::new(); // the default parts
    }
    let d = def(vec![search("search", "fetch"), fetch("fetch", "answer"), answer]);
    assert_eq!(errors(&d), []);
    assert_eq!(errors(&compaction_loop()), []);
    assert_eq!(warnings(&compaction_loop()), []);
}

#[test]
fn evidence_that_reaches_only_a_request_without_the_context_is_an_error() {
    let d = def(vec![search("search", "fetch"), fetch("fetch", "answer"), question_only("answer", END)]);
    assert_eq!(errors(&d), [("DATAFLOW_EVIDENCE_UNUSED", "steps[1].id".to_owned())]);
    let issue = &unconsumed_issues(&d)[0];
    assert!(issue.message.contains("(`answer`) render no `context_blocks`"), "{}", issue.message);
    assert!(issue.help.as_deref().is_some_and(|h| h.contains("manage_context_budget")), "{issue:?}");
    // An agent is a model step too.
    let mut agent = agent("answer", END);
    if let StepKind::Agent(a) = &mut agent.kind {
        a.call.user_parts = vec![UserPartSpec::new("user_question", "{}")];
    }
    let d = def(vec![search("search", "fetch"), fetch("fetch", "answer"), agent.clone()]);
    assert_eq!(errors(&d), [("DATAFLOW_EVIDENCE_UNUSED", "steps[1].id".to_owned())]);
    // A budget step or a custom step between them takes the texts.
    let d = def(vec![search("search", "fetch"), fetch("fetch", "b"), budget("b", "answer", "answer"), agent]);
    assert_eq!(errors(&d), []);
    let d = def(vec![
        search("search", "fetch"),
        fetch("fetch", "c"),
        custom("c", &[("done", "answer")]),
        question_only("answer", END),
    ]);
    assert_eq!(errors(&d), []);
}

#[test]
fn evidence_replaced_or_cleared_first_is_an_error_and_a_retrieval_run_is_not() {
    // A second fetch replaces the first one's texts.
    let d = def(vec![search("s", "f1"), fetch("f1", "f2"), fetch("f2", "answer"), call("answer", "answer", END)]);
    assert_eq!(errors(&d), [("DATAFLOW_EVIDENCE_UNUSED", "steps[1].id".to_owned())]);
    assert!(unconsumed_issues(&d)[0].message.contains("`f2` replaces or clears them"));
    // A rule clears them.
    let clear = set("clear", vec![literal("node_texts", serde_json::Value::Null)], "answer");
    let d = def(vec![search("s", "f"), fetch("f", "clear"), clear, call("answer", "answer", END)]);
    assert_eq!(errors(&d), [("DATAFLOW_EVIDENCE_UNUSED", "steps[1].id".to_owned())]);
    // Retrieval only: the caller reads `state.node_texts` after the run.
    let d = def(vec![search("s", "f"), fetch("f", END)]);
    assert_eq!(errors(&d), []);
    // One path that reads them is enough.
    let d = def(vec![
        search("s", "f"),
        fetch("f", "g"),
        guard("g", "answer", "plain"),
        call("answer", "answer", END),
        question_only("plain", END),
    ]);
    assert_eq!(errors(&d), []);
}

/// A step that assembles a declared context takes the fetched texts when the context reads
/// `context_blocks` (the run appends them first, as for a step whose user parts render it:
/// `evidence_flow::step_renders_context`, the one rule both sides use), and not otherwise.
#[test]
fn a_context_step_takes_the_evidence_when_its_context_reads_the_context_blocks() {
    use crate::engine::{ContextDeclaration, EngineSpec};
    let engine = |input: &str| EngineSpec {
        contexts: vec![ContextDeclaration {
            name: "support".into(),
            inputs: vec![input.into()],
            policy: None,
            messages: vec![MessageSpec::User { content: format!("{{input.{input}}}") }],
        }],
        ..EngineSpec::default()
    };
    let mut answer = call("answer", "answer", END);
    if let StepKind::CallModel(c) = &mut answer.kind {
        c.context = Some("support".into());
        c.user_parts = Vec::new();
    }
    let d = def(vec![search("s", "f"), fetch("f", "answer"), answer.clone()]).contexts(engine("context_blocks"));
    assert_eq!(errors(&d), []);
    let d = def(vec![search("s", "f"), fetch("f", "answer"), answer]).contexts(engine("user_question"));
    assert_eq!(errors(&d), [("DATAFLOW_EVIDENCE_UNUSED", "steps[1].id".to_owned())]);
}

#[test]
fn a_typo_in_a_transition_is_not_also_dead_data() {
    let d = def(vec![search("s", "f"), fetch("f", "answr"), question_only("answer", END)]);
    assert_eq!(errors(&d), []);
}

#[test]
fn hits_nothing_fetches_are_an_error() {
    let d = def(vec![search("search", "answer"), call("answer", "answer", END)]);
    assert_eq!(errors(&d), [("DATAFLOW_HITS_UNUSED", "steps[0].id".to_owned())]);
    // Expanded and then dropped: the expansion is what nothing reads.
    let d = def(vec![search("search", "x"), expand("x", "answer"), call("answer", "answer", END)]);
    assert_eq!(errors(&d), [("DATAFLOW_HITS_UNUSED", "steps[1].id".to_owned())]);
    // Replaced by a second search first.
    let d = def(vec![search("a", "b"), search("b", "f"), fetch("f", "answer"), call("answer", "answer", END)]);
    assert_eq!(errors(&d), [("DATAFLOW_HITS_UNUSED", "steps[0].id".to_owned())]);
    // Search only: the caller reads the hits.
    assert_eq!(errors(&def(vec![search("search", END)])), []);
}

#[test]
fn a_reply_replaced_before_anything_reads_it_is_a_warning() {
    // summarize → answer: the summary never reaches the answer.
    let d = def(vec![call("summarize", "summarizer", "answer"), call("answer", "answer", END)]);
    assert_eq!(warnings(&d), [("DATAFLOW_RESPONSE_OVERWRITTEN", "steps[0].id".to_owned())]);
    assert!(unconsumed_warnings(&d)[0].message.contains("replaced by `answer`"));
    // Cleared by a rule.
    let clear = set("clear", vec![literal("last_model_response", serde_json::Value::Null)], END);
    assert_eq!(warnings(&def(vec![call("summarize", "summarizer", "clear"), clear])).len(), 1);
    // Read by the next step's user parts, kept in the history, or passed on by a rule: no warning.
    let mut answer = call("answer", "answer", END);
    if let StepKind::CallModel(c) = &mut answer.kind {
        c.user_parts.push(UserPartSpec::new("last_model_response", "Draft:\n{}"));
    }
    assert_eq!(warnings(&def(vec![call("summarize", "summarizer", "answer"), answer])), []);
    let mut kept = call("summarize", "summarizer", "answer");
    if let StepKind::CallModel(c) = &mut kept.kind {
        c.use_history = true;
    }
    assert_eq!(warnings(&def(vec![kept, call("answer", "answer", END)])), []);
    // The last reply is the run's answer.
    assert_eq!(warnings(&def(vec![call("answer", "answer", END)])), []);
}

#[test]
fn a_variable_no_step_reads_is_a_warning() {
    let d = def(vec![
        set(
            "note",
            vec![literal("topic", serde_json::json!("sql")), literal("gone", serde_json::Value::Null)],
            "answer",
        ),
        call("answer", "answer", END),
    ]);
    assert_eq!(warnings(&d), [("DATAFLOW_VARIABLE_UNREAD", "steps[0].rules[0].set".to_owned())]);
    // Read by a user part: nothing to say.
    let mut answer = call("answer", "answer", END);
    if let StepKind::CallModel(c) = &mut answer.kind {
        c.user_parts.push(UserPartSpec::new("topic", "Topic: {}"));
    }
    let read = def(vec![set("note", vec![literal("topic", serde_json::json!("sql"))], "answer"), answer]);
    assert_eq!(warnings(&read), []);
    // A custom step may read any variable.
    let d = def(vec![
        set("note", vec![literal("topic", serde_json::json!("sql"))], "c"),
        custom("c", &[("done", "answer")]),
        call("answer", "answer", END),
    ]);
    assert_eq!(warnings(&d), []);
}

#[test]
fn the_paths_point_at_the_step() {
    let d = def(vec![search("search", "answer"), call("answer", "answer", END)]);
    assert_eq!(unconsumed_issues(&d)[0].path, at(&d, "search"));
}

/// A loop with no way out is `END_UNREACHABLE`; the hits it replaces round after round are not
/// a second finding.
#[test]
fn a_loop_without_end_is_left_to_the_graph_rules() {
    let d = def(vec![
        custom("route", &[("simple", "answer"), ("search", "ping")]),
        call("answer", "answer", END),
        guard("ping", "pong", "pong"),
        search("pong", "ping"),
    ]);
    assert_eq!(errors(&d), []);
}
