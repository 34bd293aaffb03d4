//! The progressive-budgeting scenario (spec: progressive_budgeting.md) through a loaded pipeline
//! with one `agent` step: three retrieval calls in one turn, each budgeted with what the
//! conversation and the earlier results left, each article counted and sent once, every request
//! within the window, and a loop that ends.

mod agent_support;
#[cfg(feature = "openai")]
mod client_support;

use agent_support::{Retriever, definition, load, search_tool};
use ctx_runtime::ChatMessage;
use ctx_runtime::PipelineState;
use ctx_runtime::llm::offline::OfflineModel;
use ctx_runtime::pipeline::{AgentEnd, AgentReport, StepDetail, StepEnv, StepReport};
use ctx_runtime::turn::RankedDocument;

const WINDOW: usize = 16_384;
const OUTPUT: usize = 1_000;
const QUESTION: &str = "What are the Comindware platform features?";

fn agent_report(reports: &[StepReport]) -> &AgentReport {
    match reports.iter().map(|r| &r.detail).next() {
        Some(StepDetail::Agent(report)) => report,
        other => panic!("{other:?}"),
    }
}

/// A state with ~1K tokens of earlier conversation (the spec's "conversation context").
fn state() -> PipelineState {
    let mut state = PipelineState::new(QUESTION);
    for i in 0..6 {
        state.history_dialog.push(ChatMessage::user(format!("Earlier question {i} about licensing tiers?")));
        state.history_dialog.push(ChatMessage::assistant("Licensing is per named user, billed yearly. ".repeat(8)));
    }
    state
}

#[tokio::test]
async fn the_offline_model_calls_the_tool_once_and_answers_from_its_documents() {
    let p = load(definition(WINDOW as i64, OUTPUT as i64, 4, vec![search_tool()]));
    let retriever = Retriever::spec_scenario();
    let model = OfflineModel::new(p.counter().clone());
    let env = StepEnv::builder().model(&model).tools(&retriever);
    let (state, reports) = p.run(state(), &env).await.unwrap();
    let report = agent_report(&reports);
    assert_eq!(report.end, AgentEnd::Answered);
    assert_eq!(report.requests.len(), 2);
    assert!(report.requests[0].tools_offered && report.requests[0].tool_calls_requested == 1);
    // The offline agent asks with the question itself.
    assert_eq!(retriever.seen()[0].query, QUESTION);
    let answer = state.last_model_response.unwrap();
    assert!(answer.contains("[A] Comindware platform feature notes"), "{answer}");
    for r in &report.requests {
        assert!(r.request.prompt_tokens + r.request.max_output_tokens <= WINDOW);
        assert_eq!(
            r.request.usage.map(|u| u.prompt_tokens),
            Some(r.request.prompt_tokens),
            "the model counted what ctx counted"
        );
    }
    // The history keeps the question and the answer, not the tool turn.
    let n = state.history_dialog.len();
    assert_eq!(state.history_dialog[n - 2], ChatMessage::user(QUESTION));
    assert!(state.history_dialog.iter().all(|m| m.tool_calls.is_empty() && m.tool_call_id.is_none()));
}

#[tokio::test]
async fn a_handler_that_returns_nothing_still_ends_the_loop() {
    let p = load(definition(WINDOW as i64, OUTPUT as i64, 2, vec![search_tool()]));
    let retriever = Retriever::new(vec![Vec::<RankedDocument>::new()]);
    let model = OfflineModel::new(p.counter().clone());
    let (state, reports) = p.run(state(), &StepEnv::builder().model(&model).tools(&retriever)).await.unwrap();
    assert_eq!(agent_report(&reports).requests.len(), 2);
    assert!(state.last_model_response.is_some());
}

#[cfg(feature = "openai")]
mod scripted_server {
    use super::*;
    use crate::agent_support::occurrences;
    use crate::client_support::{MockServer, Reply, completion, fast_retries};
    use ctx_runtime::ErrorCode;
    use ctx_runtime::pipeline::LoadedPipeline;
    use serde_json::json;

    /// The spec's checks on what the retriever saw and what the ledger ended with.
    fn assert_progressive(p: &LoadedPipeline, retriever: &Retriever, report: &AgentReport) {
        let seen = retriever.seen();
        assert_eq!(seen.len(), 3);
        // Call 2 knows A, B, C; call 3 knows A..E, A counted once.
        assert_eq!(seen.iter().map(|s| s.unique_documents).collect::<Vec<_>>(), [0, 3, 5]);
        assert!(seen.windows(2).all(|w| w[1].reserved > w[0].reserved && w[1].content_tokens < w[0].content_tokens));
        // Each call was offered what the turn had left: the budget less everything reserved.
        for (s, call) in seen.iter().zip(&report.tool_calls) {
            assert_eq!(call.available, report.turn_budget_tokens - s.reserved);
            assert!(s.content_tokens < call.available);
        }
        assert_eq!(report.tool_calls[1].duplicates_skipped, ["A"]);
        assert_eq!(report.ledger.unique_documents, 7);
        assert!(report.ledger.reserved <= report.turn_budget_tokens);
        assert_eq!(report.turn_budget_tokens, p.contract_report().step("answer").unwrap().turn_budget_tokens.unwrap());
    }

    fn search_call(id: &str, query: &str) -> Reply {
        let mut body = completion("", 0, 0);
        body["choices"][0]["message"] = json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": id, "type": "function",
                            "function": {"name": "search_docs", "arguments": json!({"query": query}).to_string()}}]
        });
        body["choices"][0]["finish_reason"] = json!("tool_calls");
        Reply::ok(body)
    }

    #[tokio::test]
    async fn three_retrieval_calls_each_budgeted_with_what_the_turn_left() {
        let p = load(definition(WINDOW as i64, OUTPUT as i64, 4, vec![search_tool()]));
        let server = MockServer::start(vec![
            search_call("call_1", "Comindware features"),
            search_call("call_2", "Comindware integrations"),
            search_call("call_3", "Comindware architecture"),
            Reply::ok(completion("Features: A, B, C, D, E, F, G.", 0, 0)),
        ])
        .await;
        let client = server.client(fast_retries(0));
        let retriever = Retriever::spec_scenario();
        let env = StepEnv::builder().model(&client).tools(&retriever);
        let (state, reports) = p.run(state(), &env).await.unwrap();
        let report = agent_report(&reports);
        assert_eq!(report.end, AgentEnd::Answered);
        assert_eq!(state.last_model_response.as_deref(), Some("Features: A, B, C, D, E, F, G."));
        assert_eq!(server.hits(), 4, "three calls and the answer");
        assert_progressive(&p, &retriever, report);
        // The server side: every body it received, counted from scratch, fits the window.
        let bodies = server.requests();
        for (i, recorded) in bodies.iter().enumerate() {
            let (messages, tools, max_tokens) = agent_support::read_body(&recorded.body);
            let prompt = p.counter().count_request(&messages, &tools).unwrap();
            assert!(prompt + max_tokens <= WINDOW, "request {i}: {prompt} + {max_tokens}");
            assert_eq!(prompt, report.requests[i].request.prompt_tokens, "request {i}");
        }
        // The last request carries every article exactly once; G did not fit whole and was cut.
        let (last, _, _) = agent_support::read_body(&bodies[3].body);
        for id in ["A", "B", "C", "D", "E", "F", "G"] {
            assert_eq!(occurrences(&last, id), 1, "article {id}");
        }
        assert!(report.tool_calls[2].truncated, "{:?}", report.tool_calls[2]);
        // Call 2 was offered exactly what the turn left: the ledger moved by call 1's result and
        // the assistant message that asked for call 2, nothing else.
        let seen = retriever.seen();
        let asked = last.iter().find(|m| m.tool_calls.iter().any(|c| c.id == "call_2")).unwrap();
        let asked_cost = p.counter().message_cost(asked, None).unwrap();
        assert_eq!(seen[1].reserved, seen[0].reserved + asked_cost + report.tool_calls[0].tokens);
    }

    #[tokio::test]
    async fn a_model_that_keeps_calling_is_stopped_at_max_tool_calls() {
        let p = load(definition(WINDOW as i64, OUTPUT as i64, 3, vec![search_tool()]));
        let server = MockServer::start(vec![
            search_call("call_1", "a"),
            search_call("call_2", "b"),
            search_call("call_3", "c"),
            // Asked without tools, it answers; a server that still called would be an error.
            Reply::ok(completion("enough", 0, 0)),
        ])
        .await;
        let client = server.client(fast_retries(0));
        let retriever = Retriever::spec_scenario();
        let (_, reports) = p.run(state(), &StepEnv::builder().model(&client).tools(&retriever)).await.unwrap();
        let report = agent_report(&reports);
        assert_eq!(report.end, AgentEnd::ToolLimitReached);
        let bodies = server.requests();
        assert_eq!(bodies.len(), 4);
        assert!(bodies[3].body.get("tools").is_none(), "the last request offers no tools");
    }

    #[tokio::test]
    async fn tool_calls_after_the_limit_are_a_typed_error_and_change_nothing() {
        let p = load(definition(WINDOW as i64, OUTPUT as i64, 1, vec![search_tool()]));
        let server = MockServer::start(vec![search_call("call_1", "a")]).await;
        let client = server.client(fast_retries(0));
        let retriever = Retriever::spec_scenario();
        let before = state();
        let err = p.run(before.clone(), &StepEnv::builder().model(&client).tools(&retriever)).await.unwrap_err();
        assert_eq!(err.code(), "AGENT_TOOL_CALLS_AFTER_LIMIT");
        assert_eq!(server.hits(), 2);
    }
}
