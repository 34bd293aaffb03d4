//! One model request of a step, from the state to the reply: shared by `call_model` and `agent`,
//! so that both lay out, negotiate, guard and send a request the same way.
//!
//! * [`render`]: the system prompt, the user message from `user_parts` and the history trimmed to
//!   `max_history_tokens` by the pipeline's `history_trim` policy, laid out by the contract's own
//!   functions: the stable parts first (system prompt, then the history, which a `fold` keeps
//!   unchanged from turn to turn), the new user message last, so a provider's prompt cache can
//!   reuse the prefix.
//! * [`negotiate_and_guard`]: the output limit negotiated against the exact request (tools
//!   included), then the last guard (`contract::guard_request`) on exactly the messages and tools
//!   that will be sent.
//! * [`send`]: the guarded request to the model, its errors named after the step.

use tracing::Instrument as _;

use crate::chat::{ChatMessage, ToolSchema};
use crate::contract;
use crate::error::CtxError;
use crate::history;
use crate::llm::{ChatModel, ChatModelDyn, ChatRequest, ChatResponse, ModelParams, Spend};
use crate::negotiate::{Negotiated, NegotiationConfig, NegotiationRequest, negotiate_max_output};
use crate::pipeline::definition::{CallModelSpec, UserPartSpec};
use crate::pipeline::env::StepEnv;
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::pipeline::stream::Token;
use crate::report::anatomy::{AnatomySource, LazyAnatomy, RequestAnatomy, UserSegment};
use crate::report::trace;
use crate::state::PipelineState;

use super::report::SentRequest;

/// The least output a `call_model` or `agent` request negotiates down to (never more than the
/// step asks for).
pub const OUTPUT_FLOOR_TOKENS: usize = NegotiationConfig::DEFAULT_FLOOR;

/// What a step renders from the state before anything is counted against the window.
pub(crate) struct Rendered<'p> {
    /// The text of `prompt_key`; for a step that assembles a context, the assembled system
    /// prompt (that text, then the context's leading system messages and packs).
    pub(crate) system: std::borrow::Cow<'p, str>,
    /// The step's output limit in effect in the contract report.
    pub(crate) requested: usize,
    /// The user message.
    pub(crate) user: ChatMessage,
    /// The user message's `user_parts`, as rendered into it (for the request's anatomy).
    pub(crate) segments: Vec<UserSegment>,
    /// The history within `max_history_tokens` (empty without `use_history`).
    pub(crate) history: Vec<ChatMessage>,
    /// History messages dropped for `max_history_tokens`.
    pub(crate) history_over_budget: usize,
    /// What the trim to `max_history_tokens` dropped, when it dropped something.
    pub(crate) history_trim: Option<history::HistoryTrimReport>,
    /// For a step that assembles a declared context: what the assembly did, and the pipeline's
    /// history as it kept it when the context draws history (see `context.rs`).
    pub(crate) context: Option<(crate::engine::AssemblyReport, Option<Vec<ChatMessage>>)>,
}

/// Renders the parts of `spec`'s request from `state` (see the module documentation); a step
/// that names a declared context (of kind `kind`) has them assembled (`context.rs`).
pub(crate) async fn render<'p>(
    p: &'p LoadedPipeline,
    (step, kind): (&str, &'static str),
    spec: &CallModelSpec,
    state: &PipelineState,
    env: &StepEnv<'_>,
) -> Result<Rendered<'p>, CtxError> {
    let system = p
        .prompt(&spec.prompt_key)
        .ok_or_else(|| PipelineError::PromptWithoutText { step: step.to_owned(), key: spec.prompt_key.clone() })?;
    let requested = p
        .output_tokens(step)
        .ok_or_else(|| PipelineError::NotResolved { pipeline: p.name().to_owned(), step: step.to_owned() })?;
    if let Some(name) = spec.context.as_deref() {
        let (assembly, kept) = super::context::assemble(p, (step, kind), name, system, state, env).await?;
        // The user message is the context's own: one segment in the anatomy, named after it.
        let segments = vec![UserSegment::new(&format!("context {name}"), "{}", &assembly.user_message, None)];
        return Ok(Rendered {
            system: assembly.system_prompt.into(),
            requested,
            user: ChatMessage::user(assembly.user_message),
            segments,
            history: assembly.history,
            history_over_budget: assembly.report.history_dropped,
            history_trim: None,
            context: Some((assembly.report, kept)),
        });
    }
    let all_parts = spec.parts();
    let values = all_parts
        .iter()
        .map(|part| {
            // What the run may still spend is computed now, from the caps and the state's spend.
            if part.source == crate::pipeline::BUDGET_REMAINING_USD {
                return Ok(p.spend_caps().remaining_text(&state.spend));
            }
            state
                .render_source(&part.source)
                .ok_or_else(|| PipelineError::MissingSource { step: step.to_owned(), source_name: part.source.clone() })
        })
        .collect::<Result<Vec<String>, _>>()?;
    // The default layout leaves its context part out, header and all, when there is no context:
    // a bare `### Context:` tells the model nothing. The contract counts the header, so the
    // message sent is never longer than the one it measured. Parts a step writes are its own.
    let omit_empty_context = spec.user_parts.is_empty();
    let (parts, values): (Vec<&UserPartSpec>, Vec<String>) = all_parts
        .iter()
        .zip(values)
        .filter(|(part, value)| !(omit_empty_context && part.source == "context_blocks" && value.is_empty()))
        .unzip();
    // Each value within its budget in the contract, or the request is not sent.
    let counter = p.step_model(step).counter;
    for (part, value) in parts.iter().zip(&values) {
        crate::pipeline::inputs::check_value(p, Some(step), part, value, counter)?;
    }
    let user = contract::render_user_message(
        parts.iter().zip(&values).map(|(part, value)| (part.template.as_str(), value.as_str())),
    );
    let segments = parts
        .iter()
        .zip(&values)
        .map(|(part, value)| {
            let blocks = (part.source == "context_blocks").then_some(state.context_blocks.as_slice());
            UserSegment::new(&part.source, &part.template, value, blocks)
        })
        .collect();
    let (history, history_over_budget, history_trim) = if spec.use_history {
        // Load-time validation requires max_history_tokens for a step that uses history.
        let budget = p.max_history_tokens().unwrap_or(0);
        let counter = p.step_model(step).counter;
        let trim = history::trim_history_with(&state.history_dialog, budget, p.history_trim(), counter)?;
        let report = (trim.removed > 0)
            .then(|| history::HistoryTrimReport::new(&trim, &state.history_dialog, budget, p.history_trim(), counter))
            .transpose()?;
        (trim.kept(&state.history_dialog), trim.removed, report)
    } else {
        (Vec::new(), 0, None)
    };
    Ok(Rendered {
        system: system.into(),
        requested,
        user: ChatMessage::user(user),
        segments,
        history,
        history_over_budget,
        history_trim,
        context: None,
    })
}

/// A request whose output limit was negotiated and whose exact count passed the guard.
pub(crate) struct Guarded {
    /// The request as counted.
    pub(crate) negotiated: Negotiated,
    /// The guard's exact count of the prompt (messages, tools and chat overhead).
    pub(crate) prompt_tokens: usize,
    /// What cutting that count into the request's parts needs besides the request: the counter,
    /// the history messages sent, the user message's segments, the margin and the window. The
    /// cut is made only when read ([`LazyAnatomy`]).
    pub(crate) layout: RequestLayout,
    /// The step's worst request as the contract proved it (prompt, output and margin; an agent's
    /// with the turn's tool calls and results).
    pub(crate) worst_case: Option<usize>,
}

/// See [`Guarded::layout`].
#[derive(Clone)]
pub(crate) struct RequestLayout {
    counter: crate::tokens::TokenCounter,
    history: usize,
    segments: Vec<UserSegment>,
    safety_margin_tokens: usize,
    context_window: usize,
}

/// Negotiates the output limit of the request `system`, `history`, `pending` (never trimmed: the
/// user message, whose `segments` they are, then an agent turn's tool calls) and `tools`, then
/// guards the exact result and cuts its count into parts. Negotiation may drop the oldest history
/// to make room for the output floor; `negotiated.meta.history_messages_dropped` says how much.
pub(crate) fn negotiate_and_guard(
    p: &LoadedPipeline,
    step: &str,
    (system, requested): (&str, usize),
    history: Vec<ChatMessage>,
    (pending, segments): (Vec<ChatMessage>, &[UserSegment]),
    tools: Vec<ToolSchema>,
) -> Result<Guarded, CtxError> {
    let model = p.step_model(step);
    let counter = model.counter;
    let context_window = model.config.context_window;
    let history_sent = history.len();
    let negotiation = NegotiationRequest {
        context_window: Some(context_window),
        // `contract::prompt_messages`' layout: the system prompt, the history, the user message.
        system_prompt: Some(system.to_owned()),
        history,
        pending,
        tools,
        config: NegotiationConfig { safety_margin: p.settings().safety_margin_tokens, floor: OUTPUT_FLOOR_TOKENS },
        ..NegotiationRequest::new(model_name(model), requested)
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
    let layout = RequestLayout {
        counter: counter.clone(),
        history: history_sent.saturating_sub(negotiated.meta.history_messages_dropped),
        segments: segments.to_vec(),
        safety_margin_tokens: p.settings().safety_margin_tokens,
        context_window,
    };
    let worst_case = p.contract_report().step(step).map(|b| b.worst_request_tokens);
    Ok(Guarded { negotiated, prompt_tokens, layout, worst_case })
}

/// Sends a guarded request to `model`, tagged with the step and the guard's count, with the
/// step's sampling parameters. With a token sink in `env` the reply streams to it as it is
/// generated (`ChatModel::chat_stream`); either way the model is asked once and the whole reply
/// comes back, with the request's anatomy. The request runs in a `gen_ai.chat` span
/// (`report::trace`) carrying its budget and, once the reply is in, its usage.
///
/// The anatomy is cut here only when a subscriber takes the span (its parts are attributes);
/// otherwise the request's messages, moved back out of the request once the reply is in, wait in
/// the [`LazyAnatomy`] until a report reads it, so a run nobody looks into never cuts one.
async fn send(
    model: &dyn ChatModelDyn,
    step: &str,
    guarded: Guarded,
    params: &ModelParams,
    env: &StepEnv<'_>,
) -> Result<(ChatResponse, LazyAnatomy), CtxError> {
    let Guarded { negotiated, prompt_tokens, layout, worst_case } = guarded;
    let max_tokens = negotiated.max_output_tokens;
    let figures = (prompt_tokens, max_tokens, layout.safety_margin_tokens, layout.context_window);
    let frame = RequestAnatomy::frame(prompt_tokens, max_tokens, layout.safety_margin_tokens, layout.context_window);
    let span = trace::request_span(model.model_name(), model.provider_name(), step, &frame, params, worst_case);
    let source = |messages: Vec<ChatMessage>, tools: Vec<ToolSchema>, layout: RequestLayout| AnatomySource {
        counter: layout.counter,
        messages,
        tools,
        history: layout.history,
        segments: layout.segments,
        figures,
    };
    // Traced: cut now (on copies, the request still needs the messages) to record the parts.
    let traced = (!span.is_disabled()).then(|| {
        let copy = (negotiated.messages.clone(), negotiated.tools.clone(), layout.clone());
        let anatomy = LazyAnatomy::new(source(copy.0, copy.1, copy.2));
        trace::record_parts(&span, anatomy.get());
        anatomy
    });
    let request = ChatRequest {
        messages: negotiated.messages,
        tools: negotiated.tools,
        max_tokens,
        params: params.clone(),
        predicted_prompt_tokens: Some(prompt_tokens),
        step_id: Some(step.to_owned()),
    };
    let response = async {
        match env.token_sink() {
            Some(sink) => {
                let mut forward = |text: &str| sink.token(Token { step, text });
                model.chat_stream(&request, &mut forward).await
            }
            None => model.chat(&request).await,
        }
    }
    .instrument(span.clone())
    .await;
    trace::record_response(&span, prompt_tokens, &response);
    let response =
        response.map_err(|source| PipelineError::Model { step: step.to_owned(), source: Box::new(source) })?;
    if response.finish_reason.as_deref() == Some("length") {
        tracing::warn!(target: "ctx::pipeline", step, max_tokens, "the reply was cut at the output limit");
    }
    let anatomy = match traced {
        Some(anatomy) => anatomy,
        None => {
            let ChatRequest { messages, tools, .. } = request;
            LazyAnatomy::new(source(messages, tools, layout))
        }
    };
    Ok((response, anatomy))
}

/// Sends `guarded` ([`send`]) and prices the reply ([`spend`], added to `spent`): the response
/// and what the step reports of the request.
pub(crate) async fn send_priced(
    p: &LoadedPipeline,
    model: &dyn ChatModelDyn,
    step: &str,
    guarded: Guarded,
    params: &ModelParams,
    env: &StepEnv<'_>,
    spent: &mut crate::state::SpendTotals,
) -> Result<(ChatResponse, SentRequest), CtxError> {
    let (prompt_tokens, max_output_tokens) = (guarded.prompt_tokens, guarded.negotiated.max_output_tokens);
    let negotiation = guarded.negotiated.meta.clone();
    let (response, anatomy) = send(model, step, guarded, params, env).await?;
    let spend = spend(p, step, prompt_tokens, &response, spent)?;
    let sent = SentRequest {
        prompt_tokens,
        max_output_tokens,
        negotiation,
        usage: response.usage,
        finish_reason: response.finish_reason.clone(),
        anatomy,
        spend,
    };
    Ok((response, sent))
}

/// Checks the guarded request against the spend caps before it is sent: its exact prompt and
/// its whole output limit, each scaled by the larger of the declared `billed_token_ratio` and the
/// highest ratio the step's model's provider has shown in this conversation, priced at the
/// highest input rate and the output rate, must fit what the run and the conversation have left
/// (`crate::pipeline::spend`).
pub(crate) fn within_caps(
    p: &LoadedPipeline,
    step: &str,
    spent: &crate::state::SpendTotals,
    guarded: &Guarded,
) -> Result<(), PipelineError> {
    let caps = p.spend_caps();
    // Load refuses a cap without a price, so an unpriced model here has no cap.
    let (false, Some(price)) = (caps.is_empty(), p.step_model(step).price) else {
        return Ok(());
    };
    let (prompt_tokens, max_output_tokens) = (guarded.prompt_tokens, guarded.negotiated.max_output_tokens);
    let seen = spent.seen_ratios(p.step_model_key(step));
    let worst =
        crate::pipeline::WorstRequest::new(&price, prompt_tokens, max_output_tokens, p.billed_token_ratio(), seen);
    match caps.over(spent, worst.nano_usd) {
        None => Ok(()),
        Some(over) => {
            tracing::warn!(
                target: "ctx::pipeline",
                step,
                scope = over.scope.name(),
                cap_usd = over.cap as f64 / 1e9,
                spent_usd = over.spent as f64 / 1e9,
                request_usd = worst.nano_usd as f64 / 1e9,
                input_ratio = worst.input_ratio,
                output_ratio = worst.output_ratio,
                "a spend cap stops the request"
            );
            Err(PipelineError::SpendCapReached {
                step: step.to_owned(),
                scope: over.scope,
                cap_nano_usd: over.cap,
                spent_nano_usd: over.spent,
                request_nano_usd: worst.nano_usd,
                prompt_tokens,
                max_output_tokens,
                worst: Box::new(worst),
            })
        }
    }
}

/// What the request that `response` answers cost at the step's model price, added to `spent`:
/// from the provider's usage when reported, else from ctx's exact counts (the guard's
/// `prompt_tokens`, and the reply's text and tool-call arguments). A reported usage is also
/// recorded as the provider's ratios of billed to counted tokens for the step's model
/// ([`SpendTotals::observe`](crate::state::SpendTotals::observe)), which later requests are
/// priced with. `None` when the model has no price. Traced with the usage, so a trace shows
/// cache hits, spend and ratios.
fn spend(
    p: &LoadedPipeline,
    step: &str,
    prompt_tokens: usize,
    response: &ChatResponse,
    spent: &mut crate::state::SpendTotals,
) -> Result<Option<Spend>, CtxError> {
    let model = p.step_model(step);
    let Some(price) = model.price else {
        if let Some(u) = &response.usage {
            tracing::info!(
                target: "ctx::pipeline",
                step,
                prompt_tokens = u.prompt_tokens,
                cache_read_tokens = u.cache_read_tokens,
                cache_write_tokens = u.cache_write_tokens,
                completion_tokens = u.completion_tokens,
                "model usage"
            );
        }
        return Ok(None);
    };
    // ctx's count of the reply: what the output is billed from without a usage, and what a
    // usage's completion tokens are compared with.
    let counter = model.counter;
    let mut reply_tokens = counter.count(&response.content)?;
    for call in &response.tool_calls {
        reply_tokens = reply_tokens.saturating_add(counter.count(&call.arguments)?);
    }
    let spend = match &response.usage {
        Some(usage) => Spend::from_usage(usage, &price),
        None => Spend::from_counts(prompt_tokens, reply_tokens, &price),
    };
    spent.add(spend.nano_usd);
    if spend.reported {
        // Every prompt token billed, at whichever rate: the input the worst case prices.
        let b = spend.billed;
        let billed_input = b.input.saturating_add(b.cached_input).saturating_add(b.cache_write);
        let ratio = |billed: usize, counted: usize| crate::state::TokenRatio::new(billed as u64, counted as u64);
        // Reasoning is billed as output but is no text ctx counted, and it is generated inside the
        // output limit: the output ratio compares the visible reply with ctx's count of it.
        let reasoning = response.usage.and_then(|u| u.reasoning_tokens).unwrap_or(0);
        let visible_output = b.output.saturating_sub(reasoning);
        spent.observe(p.step_model_key(step), ratio(billed_input, prompt_tokens), ratio(visible_output, reply_tokens));
    }
    let seen = spent.seen_ratios(p.step_model_key(step));
    tracing::info!(
        target: "ctx::pipeline",
        step,
        input_tokens = spend.billed.input,
        cache_read_tokens = spend.billed.cached_input,
        cache_write_tokens = spend.billed.cache_write,
        output_tokens = spend.billed.output,
        counted_prompt_tokens = prompt_tokens,
        counted_reply_tokens = reply_tokens,
        highest_input_ratio = seen.input.get(),
        highest_output_ratio = seen.output.get(),
        reported = spend.reported,
        usd = spend.usd(),
        "model usage and spend"
    );
    Ok(Some(spend))
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
fn model_name(model: crate::pipeline::loaded::StepModelRef<'_>) -> String {
    model.config.model.clone().or_else(|| model.name.map(str::to_owned)).unwrap_or_else(|| "(unnamed)".to_owned())
}
