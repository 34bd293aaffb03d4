//! The last guard: the exact request is counted before it is sent, and one that would overflow
//! the window never reaches the model.

use std::collections::BTreeMap;
use std::sync::Mutex;

use ctx_runtime::config::{LimitsPolicy, ModelConfig, Settings};
use ctx_runtime::contract::{
    CallModelCheck, ContractError, check_contract, fixed_prompt_tokens, guard_request, prompt_messages,
    render_user_message,
};
use ctx_runtime::llm::{ChatModel, ChatModelDyn, ChatRequest, ChatResponse, ModelError};
use ctx_runtime::pipeline::{CallModelSpec, UserPartSpec};
use ctx_runtime::{ChatMessage, CtxError, Encoding, ErrorCode, FieldPath, TokenCounter, ToolSchema};
use proptest::prelude::*;

const SYSTEM: &str = "You answer questions about a SQL code base. Quote identifiers exactly.";
const TEMPLATES: [&str; 2] = ["### Context:\n{}\n\n", "### User:\n{}\n\n"];

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

fn answer_step(max_output: i64) -> CallModelSpec {
    CallModelSpec::new("answer", "end")
        .max_output_tokens(Some(max_output))
        .user_parts(
            TEMPLATES
                .iter()
                .zip(["context_blocks", "user_question_en"])
                .map(|(t, s)| UserPartSpec::new(s, *t))
                .collect(),
        )
        .use_history(true)
}

fn model(window: usize) -> ModelConfig {
    ModelConfig::new(window, Encoding::Cl100kBase).model(None).max_tokens(None)
}

/// The question's declared budget.
const QUESTION: usize = 64;

fn settings(ctx: usize, history: usize) -> Settings {
    Settings::new(ctx)
        .max_history_tokens(Some(history))
        .safety_margin_tokens(128)
        .policy(LimitsPolicy::FailFast)
        .max_question_tokens(Some(QUESTION))
        .extra(BTreeMap::new())
}

/// The request of the answer step, built the way the step builds it.
fn request(history: &[ChatMessage], context: &str, question: &str) -> Vec<ChatMessage> {
    prompt_messages(SYSTEM, history, render_user_message([(TEMPLATES[0], context), (TEMPLATES[1], question)]))
}

/// A model that records what it was sent.
#[derive(Default)]
struct Recorder(Mutex<Vec<ChatRequest>>);

impl ChatModel for Recorder {
    fn model_name(&self) -> &str {
        "recorder"
    }
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        if let Ok(mut sent) = self.0.lock() {
            sent.push(request.clone());
        }
        Ok(ChatResponse::new("ok"))
    }
}

/// What the driver does for every model call: guard, then send.
async fn send(
    model: &dyn ChatModelDyn,
    step: &str,
    messages: Vec<ChatMessage>,
    tools: Vec<ToolSchema>,
    max_tokens: usize,
    window: usize,
) -> Result<Result<ChatResponse, ModelError>, CtxError> {
    let prompt = guard_request(step, &messages, &tools, max_tokens, window, &counter())?;
    let request = ChatRequest::new(messages, max_tokens)
        .tools(tools)
        .params(Default::default())
        .predicted_prompt_tokens(Some(prompt))
        .step_id(Some(step.into()));
    Ok(model.chat(&request).await)
}

#[tokio::test]
async fn an_overflowing_request_is_never_sent() {
    let recorder = Recorder::default();
    let c = counter();
    let history = [ChatMessage::user("Which table holds orders?"), ChatMessage::assistant("`dbo.Orders`.")];
    let small = request(&history, "CREATE TABLE dbo.Orders (Id int);", "What is its key?");
    let prompt = c.count_request(&small, &[]).unwrap();
    let window = prompt + 200;

    let sent = send(&recorder, "answer", small.clone(), vec![], 200, window).await.unwrap().unwrap();
    assert_eq!(sent.content, "ok");

    // The same request with a longer context: refused with every number, and not sent.
    let big = request(&history, &"SELECT Id FROM dbo.Orders; ".repeat(40), "What is its key?");
    let big_prompt = c.count_request(&big, &[]).unwrap();
    let err = send(&recorder, "answer", big, vec![], 200, window).await.unwrap_err();
    assert_eq!(err.code(), "REQUEST_EXCEEDS_CONTEXT_WINDOW");
    let CtxError::Contract(ContractError::RequestTooLarge {
        step_id,
        prompt_tokens,
        max_output_tokens,
        context_window,
        overflow,
    }) = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (step_id.as_str(), *prompt_tokens, *max_output_tokens, *context_window, *overflow),
        ("answer", big_prompt, 200, window, big_prompt + 200 - window)
    );
    assert!(err.to_string().contains("was not sent"), "{err}");

    // Tool schemas are part of the prompt: the small request plus a tool no longer fits.
    let tool = ToolSchema::new(
        "search_nodes",
        "Searches the code base for nodes matching a query.",
        serde_json::json!({
            "type": "object",
            "properties": { "query": { "type": "string", "description": "What to look for." } }
        }),
    );
    let err = send(&recorder, "answer", small, vec![tool], 200, window).await.unwrap_err();
    assert!(matches!(err, CtxError::Contract(ContractError::RequestTooLarge { .. })), "{err:?}");

    let sent = recorder.0.lock().unwrap();
    assert_eq!(sent.len(), 1, "only the request that fits was sent");
    assert_eq!(sent[0].predicted_prompt_tokens, Some(prompt));
}

fn words() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("SELECT"),
        Just(" o.Id"),
        Just(" FROM dbo.Orders o"),
        Just("\n"),
        Just("\n\n"),
        Just("  "),
        Just(" WHERE"),
        Just(" x = 42;"),
        Just("public class OrderService {"),
        Just("}"),
        Just(" — é ü 日本"),
        Just("###"),
        Just("{}"),
    ];
    proptest::collection::vec(word, 0..400).prop_map(|w| w.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// When the contract holds and each part stays within its budget (context within
    /// `max_context_tokens`, history within `max_history_tokens`, the question within
    /// `max_question_tokens`), the exact rendered request passes the guard: the safety margin
    /// covers the seams where BPE is not additive.
    #[test]
    fn within_budgets_the_guard_lets_the_request_through(
        context in words(),
        question in words(),
        turns in proptest::collection::vec(words(), 0..8),
    ) {
        let c = counter();
        let (ctx, hist) = (300, 200);
        // No headroom: the window is exactly what the contract asks for, so only the safety
        // margin (128) is left for the seams.
        let window = fixed_prompt_tokens(SYSTEM, &TEMPLATES, &c).unwrap() + hist + ctx + QUESTION + 300 + 128;
        let spec = answer_step(300);
        let check = CallModelCheck::new(FieldPath::root().key("steps").key("answer"), "answer", &spec, SYSTEM);
        let report = check_contract(&model(window), &settings(ctx, hist), &[check], &c).unwrap();
        let budget = report.step("answer").unwrap();
        prop_assert_eq!(budget.headroom(), 0);

        let context = c.truncate_to(&context, ctx).unwrap();
        let question = c.truncate_to(&question, QUESTION).unwrap();
        // Newest turns first, as history trimming keeps them, within the history budget as the
        // request counts it (per-message overhead included).
        let mut history: Vec<ChatMessage> = Vec::new();
        for (i, text) in turns.iter().enumerate().rev() {
            let m = if i % 2 == 0 { ChatMessage::user(text.clone()) } else { ChatMessage::assistant(text.clone()) };
            let mut candidate = vec![m];
            candidate.extend(history.iter().cloned());
            let cost = c.count_messages(&candidate).unwrap() - c.count_messages(&[]).unwrap();
            if cost > hist { break; }
            history = candidate;
        }
        let messages = request(&history, &context, &question);
        let prompt = guard_request("answer", &messages, &[], budget.output_tokens, window, &c);
        prop_assert!(prompt.is_ok(), "{:?}", prompt);
    }
}
