//! One model request of a step, from the state to the reply: shared by `call_model` and `agent`,
//! so that both lay out, negotiate, guard and send a request the same way.
//!
//! * [`render`]: the system prompt, the user message from `user_parts` and the history trimmed to
//!   `max_history_tokens`, laid out by the contract's own functions.
//! * [`negotiate_and_guard`]: the output limit negotiated against the exact request (tools
//!   included), then the last guard (`contract::guard_request`) on exactly the messages and tools
//!   that will be sent.
//! * [`send`]: the guarded request to the model, its errors named after the step.

use crate::chat::{ChatMessage, ToolSchema};
use crate::contract;
use crate::error::CtxError;
use crate::history;
use crate::llm::{ChatModel, ChatRequest, ChatResponse, ModelParams};
use crate::negotiate::{Negotiated, NegotiationConfig, NegotiationRequest, negotiate_max_output};
use crate::pipeline::definition::CallModelSpec;
use crate::pipeline::env::StepEnv;
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::pipeline::stream::Token;
use crate::state::PipelineState;

use super::call_model::OUTPUT_FLOOR_TOKENS;

/// What a step renders from the state before anything is counted against the window.
pub(crate) struct Rendered<'p> {
    /// The text of `prompt_key`.
    pub(crate) system: &'p str,
    /// The step's output limit in effect in the contract report.
    pub(crate) requested: usize,
    /// The user message.
    pub(crate) user: ChatMessage,
    /// The history within `max_history_tokens` (empty without `use_history`).
    pub(crate) history: Vec<ChatMessage>,
    /// History messages dropped for `max_history_tokens`.
    pub(crate) history_over_budget: usize,
}

/// Renders the parts of `spec`'s request from `state` (see the module documentation).
pub(crate) fn render<'p>(
    p: &'p LoadedPipeline,
    step: &str,
    spec: &CallModelSpec,
    state: &PipelineState,
) -> Result<Rendered<'p>, CtxError> {
    let system = p
        .prompt(&spec.prompt_key)
        .ok_or_else(|| PipelineError::PromptWithoutText { step: step.to_owned(), key: spec.prompt_key.clone() })?;
    let requested = p
        .output_tokens(step)
        .ok_or_else(|| PipelineError::NotResolved { pipeline: p.name().to_owned(), step: step.to_owned() })?;
    let parts = spec.parts();
    let values = parts
        .iter()
        .map(|part| {
            state
                .render_source(&part.source)
                .ok_or_else(|| PipelineError::MissingSource { step: step.to_owned(), source_name: part.source.clone() })
        })
        .collect::<Result<Vec<String>, _>>()?;
    let user = contract::render_user_message(
        parts.iter().zip(&values).map(|(part, value)| (part.template.as_str(), value.as_str())),
    );
    let (history, history_over_budget) = if spec.use_history {
        // Load-time validation requires max_history_tokens for a step that uses history.
        let budget = p.max_history_tokens().unwrap_or(0);
        let trim = history::trim_history(&state.history_dialog, budget, p.counter())?;
        (trim.kept(&state.history_dialog), trim.removed)
    } else {
        (Vec::new(), 0)
    };
    Ok(Rendered { system, requested, user: ChatMessage::user(user), history, history_over_budget })
}

/// A request whose output limit was negotiated and whose exact count passed the guard.
pub(crate) struct Guarded {
    /// The request as counted.
    pub(crate) negotiated: Negotiated,
    /// The guard's exact count of the prompt (messages, tools and chat overhead).
    pub(crate) prompt_tokens: usize,
}

/// Negotiates the output limit of the request `system`, `history`, `pending` (never trimmed) and
/// `tools`, then guards the exact result. Negotiation may drop the oldest history to make room
/// for the output floor; `negotiated.meta.history_messages_dropped` says how much.
pub(crate) fn negotiate_and_guard(
    p: &LoadedPipeline,
    step: &str,
    (system, requested): (&str, usize),
    history: Vec<ChatMessage>,
    pending: Vec<ChatMessage>,
    tools: Vec<ToolSchema>,
) -> Result<Guarded, CtxError> {
    let counter = p.counter();
    let context_window = p.context_window();
    let negotiation = NegotiationRequest {
        context_window: Some(context_window),
        // `contract::prompt_messages`' layout: the system prompt, the history, the user message.
        system_prompt: Some(system.to_owned()),
        history,
        pending,
        tools,
        config: NegotiationConfig { safety_margin: p.settings().safety_margin_tokens, floor: OUTPUT_FLOOR_TOKENS },
        ..NegotiationRequest::new(model_name(p), requested)
    };
    let negotiated = negotiate_max_output(&negotiation, counter)
        .map_err(|source| PipelineError::Negotiation { step: step.to_owned(), source })?;
    let prompt_tokens = contract::guard_request(
        step,
        &negotiated.messages,
        &negotiated.tools,
        negotiated.max_output_tokens,
        context_window,
        counter,
    )?;
    Ok(Guarded { negotiated, prompt_tokens })
}

/// Sends a guarded request to `model`, tagged with the step and the guard's count, with the
/// step's sampling parameters. With a token sink in `env` the reply streams to it as it is
/// generated (`ChatModel::chat_stream`); either way the model is asked once and the whole reply
/// comes back.
pub(crate) async fn send(
    model: &dyn ChatModel,
    step: &str,
    guarded: Guarded,
    params: &ModelParams,
    env: &StepEnv<'_>,
) -> Result<ChatResponse, CtxError> {
    let max_tokens = guarded.negotiated.max_output_tokens;
    let request = ChatRequest {
        messages: guarded.negotiated.messages,
        tools: guarded.negotiated.tools,
        max_tokens,
        params: params.clone(),
        predicted_prompt_tokens: Some(guarded.prompt_tokens),
        step_id: Some(step.to_owned()),
    };
    let response = match env.token_sink() {
        Some(sink) => {
            let mut forward = |text: &str| sink.token(Token { step, text });
            model.chat_stream(&request, &mut forward).await
        }
        None => model.chat(&request).await,
    }
    .map_err(|source| PipelineError::Model { step: step.to_owned(), source: Box::new(source) })?;
    if response.finish_reason.as_deref() == Some("length") {
        tracing::warn!(target: "ctx::pipeline", step, max_tokens, "the reply was cut at the output limit");
    }
    Ok(response)
}

/// The history a step leaves: the history that was sent, then the question as asked and the
/// answer. Tool calls and results of an agent turn are not kept: the next turn's history stays
/// the size of the conversation, not of the retrieval that served it.
pub(crate) fn extended_history(sent_history: &[ChatMessage], question: &str, answer: &str) -> Vec<ChatMessage> {
    let mut dialog = sent_history.to_vec();
    dialog.push(ChatMessage::user(question));
    dialog.push(ChatMessage::assistant(answer));
    dialog
}

/// The model's name for negotiation's records and errors; only a label, since the window is
/// always given and the name is never looked up.
fn model_name(p: &LoadedPipeline) -> String {
    p.model().model.clone().unwrap_or_else(|| "(unnamed)".to_owned())
}
