//! The run-time inputs inside the contract, under random inputs against scripted servers that
//! always answer with their whole `max_tokens` and report exactly what ctx counts: a run whose
//! question and variables are within their declared budgets (from one token to the budget) never
//! sends a request larger than the step's proven worst request and never spends more than the
//! proven cost bound; an agent's requests stay within theirs whatever its tools return (up to
//! 1 MiB); a question or variable over its budget is refused before any request, with
//! `PIPELINE_INPUT_OVER_BUDGET`, and a conversation asked it is left exactly as it was.

use std::sync::Mutex;

use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError, Usage};
use ctx_runtime::pipeline::{
    AgentSpec, BoxError, CallModelSpec, LoadOptions, LoadedConversation, LoadedPipeline, ModelSource, ModelSpec,
    PipelineDef, PriceSpec, PromptSpec, SetRuleSpec, SetValueSpec, SetVariablesSpec, SettingsSpec, StepDef, StepEnv,
    ToolHandlers, ToolOutput, ToolRequest, ToolSpec, UserPartSpec,
};
use ctx_runtime::tokens::TokenCounter;
use ctx_runtime::{ErrorCode, PipelineState, ToolCall};
use proptest::prelude::*;

const QUESTION_BUDGET: i64 = 600;
const VARIABLE_BUDGET: i64 = 80;

/// Answers every request with exactly `max_tokens` tokens (`a a a …`) and reports the prompt as
/// ctx counts it; asks for one tool call per request while tools are offered. Records requests.
struct FullOutput {
    counter: TokenCounter,
    requests: Mutex<Vec<ChatRequest>>,
}

impl FullOutput {
    fn new(counter: &TokenCounter) -> Self {
        FullOutput { counter: counter.clone(), requests: Mutex::new(Vec::new()) }
    }

    fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl ChatModel for FullOutput {
    fn model_name(&self) -> &str {
        "full-output"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let prompt = self.counter.count_request(&request.messages, &request.tools).unwrap();
        let n = self.requests.lock().map(|mut r| {
            r.push(request.clone());
            r.len()
        });
        let usage = Some(Usage::new(prompt, request.max_tokens));
        if !request.tools.is_empty() {
            let call = ToolCall::new(format!("call_{}", n.unwrap_or(0)), "fetch_page", r#"{"url":"u"}"#);
            return Ok(ChatResponse::default().tool_calls(vec![call]).usage(usage));
        }
        // `a` then ` a` per further token: exactly `max_tokens` tokens in cl100k_base.
        let content = format!("a{}", " a".repeat(request.max_tokens.saturating_sub(1)));
        Ok(ChatResponse::new(content).usage(usage))
    }
}

/// A tool whose every result is `bytes` long.
struct Pages {
    bytes: usize,
}

impl ToolHandlers for Pages {
    async fn call(&self, _step: &str, _request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::Text("page text, ".repeat(self.bytes / 11 + 1)))
    }
}

fn model() -> ModelSource {
    ModelSource::Inline(
        ModelSpec::default()
            .context_window(Some(8_192))
            .max_tokens(Some(400))
            .encoding(Some("cl100k_base".into()))
            .price(Some(PriceSpec::default().input(Some(2.5)).output(Some(10.0)))),
    )
}

fn settings() -> SettingsSpec {
    SettingsSpec::default()
        .max_context_tokens(Some(2_000))
        .max_history_tokens(Some(500))
        .max_question_tokens(Some(QUESTION_BUDGET))
        .max_variable_tokens(Some(VARIABLE_BUDGET))
}

/// `ticket` sets the variable `ticket` to `ticket`; `draft` renders the question and the
/// variable; `answer` renders the draft (an earlier reply), the context and the question again,
/// with the history.
fn two_steps(draft_output: i64, answer_output: i64, ticket: &str) -> PipelineDef {
    PipelineDef::new("Inputs")
        .model(model())
        .settings(settings())
        .prompts(vec![
            PromptSpec::new("draft", Some("Draft an answer to the ticket.".into())),
            PromptSpec::new("answer", Some("Answer from the draft and the context.".into())),
        ])
        .steps(vec![
            StepDef::new(
                "ticket",
                ctx_runtime::pipeline::StepKind::SetVariables(SetVariablesSpec::new(
                    vec![SetRuleSpec::new("ticket", SetValueSpec::Value(ticket.into()))],
                    "draft",
                )),
            ),
            StepDef::new(
                "draft",
                ctx_runtime::pipeline::StepKind::CallModel(
                    CallModelSpec::new("draft", "answer").max_output_tokens(Some(draft_output)).user_parts(vec![
                        UserPartSpec::new("ticket", "Ticket: {}\n"),
                        UserPartSpec::new("user_question", "Question: {}\n"),
                    ]),
                ),
            ),
            StepDef::new(
                "answer",
                ctx_runtime::pipeline::StepKind::CallModel(
                    CallModelSpec::new("answer", "end")
                        .max_output_tokens(Some(answer_output))
                        .use_history(true)
                        .user_parts(vec![
                            UserPartSpec::new("last_model_response", "Draft: {}\n"),
                            UserPartSpec::new("context_blocks", "### Context:\n{}\n\n"),
                            UserPartSpec::new("user_question_en", "### User:\n{}\n\n"),
                        ]),
                ),
            ),
        ])
}

/// One agent step rendering the question, with a page-fetching tool.
fn agent(max_tool_calls: i64, output: i64) -> PipelineDef {
    let tool = ToolSpec::new(
        "fetch_page",
        "Fetch a page",
        r#"{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}"#,
    );
    PipelineDef::new("Agent")
        .model(model())
        .settings(settings())
        .prompts(vec![PromptSpec::new("answer", Some("Answer from the pages you fetch.".into()))])
        .steps(vec![StepDef::new(
            "answer",
            ctx_runtime::pipeline::StepKind::Agent(AgentSpec::new(
                CallModelSpec::new("answer", "end")
                    .max_output_tokens(Some(output))
                    .user_parts(vec![UserPartSpec::new("user_question", "{}")]),
                vec![tool],
                max_tool_calls,
            )),
        )])
}

/// A text of `n` words of mixed shape (words, digits, punctuation), so counts are not linear.
fn text(n: usize, seed: u64) -> String {
    let words = ["invoice", "total", "42", "why?", "lines", "Σ", "rounding", "€19.99", "tax-free", "\n"];
    (0..n)
        .map(|i| words[(i as u64).wrapping_mul(seed | 1).wrapping_add(seed) as usize % words.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every request `model` received fits the worst request its step was proven for.
fn within_worst(p: &LoadedPipeline, requests: &[ChatRequest]) -> Result<(), TestCaseError> {
    for r in requests {
        let step = r.step_id.as_deref().unwrap();
        let worst = p.contract_report().step(step).unwrap().worst_request_tokens;
        let sent = p.counter().count_request(&r.messages, &r.tools).unwrap() + r.max_tokens;
        prop_assert!(sent <= worst, "step {}: sent {} > proven {}", step, sent, worst);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn inputs_within_their_budgets_stay_within_the_proof_and_over_them_are_refused(
        question_words in 1usize..700,
        ticket_words in 0usize..110,
        seed in any::<u64>(),
        draft_output in 50i64..400,
        answer_output in 50i64..400,
        history_turns in 0usize..6,
    ) {
        let question = text(question_words, seed);
        let ticket = text(ticket_words, seed.rotate_left(7));
        let p = LoadedPipeline::load(two_steps(draft_output, answer_output, &ticket), LoadOptions::new()).unwrap();
        let bound = p.cost_bound().expect("priced").nano_usd;
        let over = p.counter().count(&question).unwrap() > QUESTION_BUDGET as usize
            || p.counter().count(&ticket).unwrap() > VARIABLE_BUDGET as usize;
        let mut state = PipelineState::new(question.clone());
        for i in 0..history_turns {
            state.history_dialog.push(ctx_runtime::ChatMessage::user(format!("earlier {i}")));
            state.history_dialog.push(ctx_runtime::ChatMessage::assistant(text(60, seed ^ i as u64)));
        }
        let model = FullOutput::new(p.counter());
        let env = StepEnv::builder().model(&model);
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        match runtime.block_on(p.run(state.clone(), &env)) {
            Ok((end, _)) => {
                prop_assert!(!over, "an input over its budget ran");
                prop_assert!(end.spend.run_nano_usd <= bound, "spent {} > bound {}", end.spend.run_nano_usd, bound);
                within_worst(&p, &model.requests())?;
            }
            Err(e) => {
                prop_assert!(over, "refused within budget: {}", e);
                prop_assert_eq!(e.code(), "PIPELINE_INPUT_OVER_BUDGET");
                prop_assert!(model.requests().is_empty(), "a request left before the refusal");
            }
        }

        // A conversation asked the same: refused questions change nothing.
        let mut chat = LoadedConversation::new(p.clone());
        chat.set_variable("note", "kept");
        let before = chat.state().clone();
        let asked = runtime.block_on(chat.ask(question, &env));
        if over {
            prop_assert_eq!(asked.unwrap_err().code(), "PIPELINE_INPUT_OVER_BUDGET");
            prop_assert_eq!(chat.state(), &before);
            prop_assert_eq!(chat.turns(), 0);
        } else {
            prop_assert!(asked.is_ok());
        }
    }

    #[test]
    fn an_agent_request_stays_within_its_worst_request_whatever_its_tools_return(
        question_words in 1usize..450,
        seed in any::<u64>(),
        max_tool_calls in 1i64..5,
        output in 50i64..600,
        page_bytes in prop::sample::select(vec![0usize, 200, 5_000, 60_000, 1 << 20]),
    ) {
        let p = LoadedPipeline::load(agent(max_tool_calls, output), LoadOptions::new()).unwrap();
        let bound = p.cost_bound().expect("priced").nano_usd;
        let question = text(question_words, seed);
        prop_assume!(p.counter().count(&question).unwrap() <= QUESTION_BUDGET as usize);
        let model = FullOutput::new(p.counter());
        let pages = Pages { bytes: page_bytes };
        let env = StepEnv::builder().model(&model).tools(&pages);
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (end, _) = runtime.block_on(p.run(PipelineState::new(question), &env)).unwrap();
        prop_assert!(end.spend.run_nano_usd <= bound, "spent {} > bound {}", end.spend.run_nano_usd, bound);
        within_worst(&p, &model.requests())?;
    }
}

/// The refusal names the input, its exact count and its budget.
#[test]
fn the_refusal_names_the_input_its_count_and_its_budget() {
    let p = LoadedPipeline::load(two_steps(100, 100, "short"), LoadOptions::new()).unwrap();
    let question = text(2_000, 3);
    let tokens = p.counter().count(&question).unwrap();
    let model = FullOutput::new(p.counter());
    let env = StepEnv::builder().model(&model);
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let state = PipelineState::new(question);
    let e = runtime.block_on(p.run(state, &env)).unwrap_err();
    assert_eq!(e.code(), "PIPELINE_INPUT_OVER_BUDGET");
    let message = e.to_string();
    for part in [
        "the question (`user_question`)".to_owned(),
        format!("is {tokens} tokens"),
        format!("budget of {QUESTION_BUDGET}"),
        "`max_question_tokens`".to_owned(),
        "refused before any request".to_owned(),
    ] {
        assert!(message.contains(&part), "{part} missing from: {message}");
    }
    assert!(model.requests().is_empty());
}
