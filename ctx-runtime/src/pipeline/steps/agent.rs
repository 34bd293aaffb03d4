//! `agent`: a `call_model` step that offers tools and runs the calls the model requests, within
//! one turn budget and a declared number of calls.
//!
//! * The first request is laid out, negotiated and guarded exactly as `call_model`'s (fetched
//!   texts waiting in `node_texts` appended to the context when the user message renders it,
//!   system prompt, history trimmed to `max_history_tokens`, the user message from `user_parts`),
//!   with the tool schemas added.
//! * A [`TurnLedger`] holds the turn: the messages of that request, then every tool call and
//!   result, each counted once with its exact chat-format cost and each document once by id. Its
//!   budget is `turn_budget_tokens`, by default the window less the output limit, the tool
//!   schemas, the reply priming and the safety margin, so a turn within its budget always leaves
//!   the requested output room.
//! * Each tool call gets what the ledger has left, less what the rest of its batch needs for
//!   its own (empty) results, so every call of a batch can be answered. Documents are packed by
//!   the ledger (de-duplicated across the turn, whole first, the best one that does not fit cut at
//!   a token boundary); a text is cut at a token boundary to the room it has, with a warning event.
//! * When a batch cannot be answered even with empty results, it is left out of the transcript
//!   and the model is asked to answer without tools ([`AgentEnd::BudgetExhausted`]).
//! * Calls beyond `max_tool_calls` are answered with [`TOOL_LIMIT_MESSAGE`] so the transcript
//!   stays valid, and once the limit is reached the next request offers no tools: the step makes
//!   at most `max_tool_calls + 1` requests.
//! * Every request is negotiated and guarded before it is sent: none exceeds the window.
//! * Every request is checked against the spend caps before it is sent (`pipeline::spend`). When
//!   one offering tools could pass a cap, the same request without tools is tried instead, asking
//!   for the final answer ([`AgentEnd::SpendCapReached`]); when that one could too, the step stops
//!   with `PIPELINE_SPEND_CAP_REACHED`.
//!
//! On success `last_model_response` holds the answer; with `use_history`, `history_dialog` keeps
//! the history that was sent, the question and the answer — not the tool calls and results, so
//! that the next turn's history stays the size of the conversation. On any error the state is
//! unchanged.

use crate::chat::{ChatMessage, ToolCall, ToolSchema};
use crate::error::CtxError;
use crate::pipeline::Transition;
use crate::pipeline::definition::AgentSpec;
use crate::pipeline::env::{StepEnv, need, need_model};
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::report::anatomy::UserSegment;
use crate::state::PipelineState;
use crate::turn::{PartialPolicy, TurnBudgetConfig, TurnError, TurnLedger};

use super::evidence;
use super::report::{AgentEnd, AgentReport, Done, ModelRequestReport, StepDetail};
use super::request::{self, Guarded};

mod batch;

pub use batch::TOOL_LIMIT_MESSAGE;
pub use ctx_spec::pipeline::MAX_TOOL_CALLS_CAP;

/// What the loop carries from one request to the next.
struct Turn<'a> {
    p: &'a LoadedPipeline,
    step: &'a str,
    system: std::borrow::Cow<'a, str>,
    requested: usize,
    user: ChatMessage,
    segments: Vec<UserSegment>,
    history: Vec<ChatMessage>,
    schemas: Vec<ToolSchema>,
    transcript: Vec<ChatMessage>,
}

impl Turn<'_> {
    /// The next request: the history, the question and the transcript so far, with the tools
    /// when `offered`. Drops from the history what negotiation dropped, so `history` is always
    /// what was last sent.
    fn next_request(&mut self, offered: bool) -> Result<Guarded, CtxError> {
        let pending: Vec<ChatMessage> = std::iter::once(self.user.clone()).chain(self.transcript.clone()).collect();
        let tools = if offered { self.schemas.clone() } else { Vec::new() };
        let guarded = request::negotiate_and_guard(
            self.p,
            self.step,
            (&self.system, self.requested),
            self.history.clone(),
            (pending, &self.segments),
            tools,
        )?;
        let dropped = guarded.negotiated.meta.history_messages_dropped.min(self.history.len());
        self.history.drain(..dropped);
        Ok(guarded)
    }
}

pub(crate) async fn agent(
    p: &LoadedPipeline,
    step: &str,
    spec: &AgentSpec,
    state: &mut PipelineState,
    env: &StepEnv<'_>,
) -> Result<Done, CtxError> {
    let model = need_model(p, env, step, "agent")?;
    let handlers = need(env.tools_backend(), step, "agent", "ToolHandlers", "tools")?;
    // Load-time validation keeps max_tool_calls in 1..=MAX_TOOL_CALLS_CAP.
    let max_calls = usize::try_from(spec.max_tool_calls.clamp(1, MAX_TOOL_CALLS_CAP)).unwrap_or(1);
    let counter = p.step_model(step).counter;
    let evidence = evidence::take_pending(p, step, state)?;
    let rendered = request::render(p, (step, "agent"), &spec.call, state, env).await?;
    let history_len = rendered.history.len();
    let (assembly, kept_history) = rendered.context.unzip();
    let mut turn = Turn {
        p,
        step,
        system: rendered.system,
        requested: rendered.requested,
        user: rendered.user,
        segments: rendered.segments,
        history: rendered.history,
        schemas: spec.schemas(),
        transcript: Vec::new(),
    };
    // The contract counted the tool schemas and set the turn's budget when the pipeline loaded.
    let (tool_schema_tokens, budget) = p
        .contract_report()
        .step(step)
        .and_then(|b| Some((b.tool_schema_tokens, b.turn_budget_tokens?)))
        .ok_or_else(|| PipelineError::NotResolved { pipeline: p.name().to_owned(), step: step.to_owned() })?;
    let mut guarded = turn.next_request(true)?;
    let config = TurnBudgetConfig::new(
        budget.min(p.step_model(step).config.context_window),
        p.step_model(step).config.context_window,
    )
    .with_partial(PartialPolicy::Truncate);
    let turn_error = |source: TurnError| PipelineError::Turn { step: step.to_owned(), source };
    // The conversation the turn starts from: exactly the messages of the first request.
    let mut ledger =
        TurnLedger::with_messages(config, counter.clone(), &guarded.negotiated.messages).map_err(turn_error)?;

    let mut requests = Vec::new();
    let mut tool_calls = Vec::new();
    let mut executed = 0usize;
    let mut offered = true;
    let mut end = AgentEnd::Answered;
    let answer = loop {
        if let Err(stop) = request::within_caps(p, step, &state.spend, &guarded) {
            // Rather than stop, ask for the answer without tools when that request fits: it
            // carries no tool schemas and ends the turn.
            let plain = if offered { Some(turn.next_request(false)?) } else { None };
            match plain {
                Some(plain) if request::within_caps(p, step, &state.spend, &plain).is_ok() => {
                    tracing::warn!(target: "ctx::pipeline", step, "a spend cap: asking for the answer without tools");
                    guarded = plain;
                    offered = false;
                    end = AgentEnd::SpendCapReached;
                }
                _ => return Err(stop.into()),
            }
        }
        let (response, sent) =
            request::send_priced(p, model, step, guarded, &spec.call.params, env, &mut state.spend).await?;
        let max_output_tokens = sent.max_output_tokens;
        requests.push(ModelRequestReport {
            request: sent,
            tools_offered: offered,
            tool_calls_requested: response.tool_calls.len(),
        });
        if response.tool_calls.is_empty() {
            break response;
        }
        if !offered {
            // No tools were offered, so the calls cannot run; a reply that also answers is the
            // answer (throwing it away for a stray call would fail a turn that succeeded).
            if !response.content.trim().is_empty() {
                tracing::warn!(
                    target: "ctx::agent",
                    step,
                    calls = response.tool_calls.len(),
                    "the model asked for tools after the limit but also answered; the answer is kept"
                );
                break response;
            }
            return Err(PipelineError::ToolCallsAfterLimit {
                step: step.to_owned(),
                calls: response.tool_calls.len(),
                max_tool_calls: u32::try_from(max_calls).unwrap_or(u32::MAX),
            }
            .into());
        }
        let calls: &[ToolCall] = &response.tool_calls;
        let run = batch::Batch { step, spec, state, handlers, max_calls };
        // Encrypted reasoning (OpenAI Responses) is counted in later requests by what the server
        // reported for it, else by the output limit it was generated inside: never less.
        let hidden = response
            .thinking
            .iter()
            .any(|t| crate::tokens::is_reasoning_item(&t.block))
            .then(|| response.usage.and_then(|u| u.reasoning_tokens).unwrap_or(max_output_tokens));
        match run.answer(&mut ledger, (&response.content, &response.thinking, hidden), calls, &mut executed).await? {
            Some((messages, reports)) => {
                turn.transcript.extend(messages);
                tool_calls.extend(reports);
            }
            None => {
                tracing::warn!(
                    target: "ctx::pipeline",
                    step,
                    calls = calls.len(),
                    available = ledger.available(),
                    "the turn's budget cannot hold the requested tool calls; asking for an answer without tools"
                );
                end = AgentEnd::BudgetExhausted;
                offered = false;
            }
        }
        if executed >= max_calls && offered {
            end = AgentEnd::ToolLimitReached;
            offered = false;
        }
        guarded = turn.next_request(offered)?;
    };

    let history_removed = rendered.history_over_budget.saturating_add(history_len - turn.history.len());
    let report = AgentReport {
        requests,
        tool_calls,
        ledger: ledger.breakdown(),
        turn_budget_tokens: budget,
        tool_schema_tokens,
        context_window: p.step_model(step).config.context_window,
        history_messages: turn.history.len(),
        history_removed,
        history_trim: rendered.history_trim,
        end,
        context: assembly,
        evidence,
    };
    tracing::info!(
        target: "ctx::pipeline",
        step,
        requests = report.requests.len(),
        tool_calls = report.tool_calls.len(),
        reserved = report.ledger.reserved,
        unique_documents = report.ledger.unique_documents,
        end = ?report.end,
        "agent turn done"
    );
    if spec.call.use_history {
        state.history_dialog = request::extended_history(&turn.history, &state.user_question, &answer.content);
    } else if let Some(Some(kept)) = kept_history {
        state.history_dialog = request::extended_history(&kept, &state.user_question, &answer.content);
    }
    state.last_model_response = Some(answer.content);
    Ok((Transition::Next, StepDetail::Agent(report)))
}

#[cfg(test)]
mod tests;
