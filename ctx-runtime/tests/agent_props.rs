//! Properties of the agent step under random turns: random tool schemas, histories, numbers of
//! calls per reply (unknown tools included), result sizes and document ids (with duplicates),
//! and `max_tool_calls`. Whatever they are, no request exceeds the window, the step makes at most
//! `max_tool_calls + 1` requests, every tool call id of a request is answered in it, and each
//! document is sent once.

mod agent_support;

use std::collections::{BTreeSet, VecDeque};
use std::sync::Mutex;

use agent_support::{definition, load};
use ctx_runtime::chat::Role;
use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use ctx_runtime::pipeline::BoxError;
use ctx_runtime::pipeline::{
    AgentEnd, StepDetail, StepEnv, ToolCallKind, ToolHandlers, ToolOutput, ToolRequest, ToolSpec,
};
use ctx_runtime::turn::RankedDocument;
use ctx_runtime::{ChatMessage, PipelineState, ToolCall};
use proptest::prelude::*;

const WINDOW: usize = 4_096;

/// Replies to a request offering tools with the next batch of the script (tool indexes; one past
/// the last tool is a tool the step does not declare), else with an answer. Records requests.
struct Model {
    batches: Mutex<VecDeque<Vec<usize>>>,
    names: Vec<String>,
    next_id: Mutex<usize>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ChatModel for Model {
    fn model_name(&self) -> &str {
        "props"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        let batch = if request.tools.is_empty() { None } else { self.batches.lock().unwrap().pop_front() };
        let Some(batch) = batch else { return Ok(ChatResponse::new("answer")) };
        let mut next = self.next_id.lock().unwrap();
        let tool_calls = batch
            .into_iter()
            .map(|t| {
                *next += 1;
                let name = self.names.get(t).cloned().unwrap_or_else(|| "not_declared".into());
                ToolCall::new(format!("call_{}", *next), name, r#"{"query":"q"}"#)
            })
            .collect();
        Ok(ChatResponse::default().tool_calls(tool_calls))
    }
}

#[derive(Debug, Clone)]
enum Out {
    /// (document id, words) in rank order.
    Docs(Vec<(u8, usize)>),
    /// A text of this many words.
    Text(usize),
}

struct Handlers {
    outputs: Vec<Out>,
    calls: Mutex<usize>,
}

impl ToolHandlers for Handlers {
    async fn call(&self, _step: &str, _request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        let mut calls = self.calls.lock().unwrap();
        let out = self.outputs.get(*calls % self.outputs.len().max(1)).cloned().unwrap_or(Out::Text(0));
        *calls += 1;
        Ok(match out {
            Out::Docs(docs) => ToolOutput::Documents(
                docs.into_iter()
                    .map(|(id, words)| RankedDocument::new(format!("kb-{id}"), "lorem ipsum ".repeat(words)))
                    .collect(),
            ),
            Out::Text(words) => ToolOutput::Text("dolor sit amet ".repeat(words)),
        })
    }
}

fn schema() -> impl Strategy<Value = (String, String)> {
    let property = ("[a-z]{1,8}", prop_oneof![Just("string"), Just("integer")], proptest::option::of("[a-z ]{1,20}"));
    (proptest::collection::vec(property, 0..4), "[A-Za-z][A-Za-z ]{0,39}").prop_map(|(props, description)| {
        let properties: serde_json::Map<String, serde_json::Value> = props
            .into_iter()
            .map(|(k, ty, d)| {
                let mut p = serde_json::json!({ "type": ty });
                if let Some(d) = d {
                    p["description"] = serde_json::json!(d);
                }
                (k, p)
            })
            .collect();
        (serde_json::json!({"type": "object", "properties": properties}).to_string(), description)
    })
}

fn out() -> impl Strategy<Value = Out> {
    prop_oneof![
        proptest::collection::vec((0u8..6, 0usize..1_500), 0..4).prop_map(Out::Docs),
        (0usize..2_500).prop_map(Out::Text),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn no_request_over_the_window_and_the_loop_ends(
        schemas in proptest::collection::vec(schema(), 1..4),
        max_tool_calls in 1i64..6,
        output in 100i64..800,
        batches in proptest::collection::vec(proptest::collection::vec(0usize..4, 1..4), 0..8),
        outputs in proptest::collection::vec(out(), 1..6),
        history in proptest::collection::vec(0usize..200, 0..8),
        fold in proptest::option::of(1i64..100),
    ) {
        let had_batches = !batches.is_empty();
        let tools: Vec<ToolSpec> = schemas
            .iter()
            .enumerate()
            .map(|(i, (parameters, description))| ToolSpec::new(format!("tool_{i}"), description.clone(), parameters.clone()))
            .collect();
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        let mut def = definition(WINDOW as i64, output, max_tool_calls, tools);
        // Both history policies: today's oldest-first, and a fold to a random low-water mark.
        if let Some(low_water) = fold {
            def.settings = def.settings.clone().history_trim(Some("fold".into())).history_low_water_percent(Some(low_water));
        }
        let p = load(def);
        let model = Model {
            batches: Mutex::new(batches.into_iter().map(|b| b.into_iter().map(|t| t.min(names.len())).collect()).collect()),
            names,
            next_id: Mutex::new(0),
            requests: Mutex::new(Vec::new()),
        };
        let handlers = Handlers { outputs, calls: Mutex::new(0) };
        let mut state = PipelineState::new("What is in the knowledge base?");
        for (i, words) in history.iter().enumerate() {
            state.history_dialog.push(ChatMessage::user(format!("question {i}")));
            state.history_dialog.push(ChatMessage::assistant("earlier answer ".repeat(*words)));
        }
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let env = StepEnv::builder().model(&model).tools(&handlers);
        let (state, reports) = runtime.block_on(p.run(state, &env)).unwrap();
        prop_assert_eq!(state.last_model_response.as_deref(), Some("answer"));
        let requests = model.requests.lock().unwrap().clone();
        let bound = usize::try_from(max_tool_calls).unwrap() + 1;
        prop_assert!(requests.len() <= bound, "{} requests, bound {}", requests.len(), bound);
        for (i, r) in requests.iter().enumerate() {
            let prompt = p.counter().count_request(&r.messages, &r.tools).unwrap();
            prop_assert!(prompt + r.max_tokens <= WINDOW, "request {}: {} + {}", i, prompt, r.max_tokens);
            let called: BTreeSet<&str> = r.messages.iter().flat_map(|m| &m.tool_calls).map(|c| c.id.as_str()).collect();
            let answered: BTreeSet<&str> =
                r.messages.iter().filter(|m| m.role == Role::Tool).filter_map(|m| m.tool_call_id.as_deref()).collect();
            prop_assert_eq!(&called, &answered, "request {}", i);
        }
        let last = requests.last().unwrap();
        for id in 0..6 {
            prop_assert!(agent_support::occurrences(&last.messages, &format!("kb-{id}")) <= 1, "kb-{}", id);
        }
        let StepDetail::Agent(report) = &reports[0].detail else { panic!("{:?}", reports[0].detail) };
        prop_assert_eq!(report.requests.len(), requests.len());
        prop_assert!(report.ledger.reserved <= report.turn_budget_tokens);
        // The ledger is the exact last transcript: nothing counted twice, nothing left out.
        let priming = p.counter().count_messages(&[]).unwrap();
        prop_assert_eq!(report.ledger.reserved + priming, p.counter().count_messages(&last.messages).unwrap());
        if had_batches {
            prop_assert!(!report.tool_calls.is_empty() || report.end == AgentEnd::BudgetExhausted);
        }
        prop_assert!(report.tool_calls.iter().filter(|c| c.kind != ToolCallKind::OverLimit).count() < bound);
    }
}
