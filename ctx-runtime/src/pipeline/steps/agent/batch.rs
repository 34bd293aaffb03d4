//! One batch of tool calls: the assistant message that requests them and a result for each,
//! recorded in the turn ledger so that every result costs exactly what the ledger allowed it.
//!
//! A batch is answered whole or not at all: the chat format requires a result for every call id
//! of an assistant message, so before anything is recorded the batch's least cost (the assistant
//! message, an empty result per call that runs, the limit message per call over the limit) must
//! fit in what the turn has left. Each call then gets what is left less the least cost of the
//! calls after it.

use crate::chat::{ChatMessage, SignedThinking, ToolCall};
use crate::error::CtxError;
use crate::pipeline::definition::AgentSpec;
use crate::pipeline::error::PipelineError;
use crate::pipeline::steps::report::{ToolCallKind, ToolCallReport};
use crate::pipeline::tools::{ToolHandlers, ToolHandlersDyn, ToolOutput, ToolRequest};
use crate::state::PipelineState;
use crate::tokens::TokenCounter;
use crate::turn::{Inclusion, TurnError, TurnLedger};

/// The result sent for a tool call beyond `max_tool_calls`.
pub const TOOL_LIMIT_MESSAGE: &str = "tool call limit reached; answer with what you have";

/// What answering one batch needs from the step.
pub(super) struct Batch<'a> {
    pub(super) step: &'a str,
    pub(super) spec: &'a AgentSpec,
    pub(super) state: &'a PipelineState,
    pub(super) handlers: &'a dyn ToolHandlersDyn,
    pub(super) max_calls: usize,
}

/// The messages to append to the transcript and a report per call.
pub(super) type Answered = (Vec<ChatMessage>, Vec<ToolCallReport>);

impl Batch<'_> {
    /// Records the assistant message of `calls` (with its `content`) and a result for each call
    /// in `ledger`, running the handlers of the calls within the limit (`executed` counts the
    /// calls run so far in the turn). `None`, with the ledger unchanged, when the batch cannot be
    /// answered within the turn's budget even with empty results.
    pub(super) async fn answer(
        &self,
        ledger: &mut TurnLedger,
        (content, thinking, reasoning_tokens): (&str, &[SignedThinking], Option<usize>),
        calls: &[ToolCall],
        executed: &mut usize,
    ) -> Result<Option<Answered>, CtxError> {
        let counter = ledger.counter().clone();
        let turn_error = |source: TurnError| PipelineError::Turn { step: self.step.to_owned(), source };
        // The reply's signed thinking stays on the message of its calls, unchanged (one unit).
        let assistant = ChatMessage::assistant_tool_calls(content, calls.to_vec())
            .with_thinking(thinking.to_vec())
            .with_reasoning_tokens(reasoning_tokens);
        let mut runs = *executed;
        let mut plan = Vec::with_capacity(calls.len());
        for call in calls {
            let kind = if runs >= self.max_calls {
                ToolCallKind::OverLimit
            } else {
                runs += 1;
                if self.spec.tools.iter().any(|t| t.name == call.name) {
                    ToolCallKind::Handled
                } else {
                    ToolCallKind::UnknownTool
                }
            };
            let least = if kind == ToolCallKind::OverLimit { TOOL_LIMIT_MESSAGE } else { "" };
            let cost =
                counter.message_cost(&ChatMessage::tool_result(call.id.clone(), least), answered(calls, call))?;
            plan.push((kind, cost));
        }
        let needed =
            plan.iter().fold(counter.message_cost(&assistant, None)?, |sum, (_, cost)| sum.saturating_add(*cost));
        if needed > ledger.available() {
            return Ok(None);
        }
        ledger.add_message(&assistant).map_err(turn_error)?;
        let mut messages = vec![assistant];
        let mut reports = Vec::with_capacity(calls.len());
        for (i, (call, (kind, _))) in calls.iter().zip(&plan).enumerate() {
            let reserve: usize = plan.get(i + 1..).unwrap_or(&[]).iter().map(|(_, cost)| cost).sum();
            let (message, report) = self.answer_one(ledger, &counter, calls, call, *kind, reserve).await?;
            if *kind != ToolCallKind::OverLimit {
                *executed += 1;
            }
            messages.push(message);
            reports.push(report);
        }
        Ok(Some((messages, reports)))
    }

    /// The result of one call, recorded in `ledger`, leaving `reserve` tokens for the rest of the
    /// batch.
    async fn answer_one(
        &self,
        ledger: &mut TurnLedger,
        counter: &TokenCounter,
        calls: &[ToolCall],
        call: &ToolCall,
        kind: ToolCallKind,
        reserve: usize,
    ) -> Result<(ChatMessage, ToolCallReport), CtxError> {
        let turn_error = |source: TurnError| PipelineError::Turn { step: self.step.to_owned(), source };
        let mut report = ToolCallReport {
            name: call.name.clone(),
            call_id: call.id.clone(),
            kind,
            available: ledger.available(),
            content_budget: 0,
            tokens: 0,
            documents_included: Vec::new(),
            duplicates_skipped: Vec::new(),
            left_out: Vec::new(),
            truncated: false,
        };
        if kind == ToolCallKind::OverLimit {
            let message = ChatMessage::tool_result(call.id.clone(), TOOL_LIMIT_MESSAGE);
            report.tokens = ledger.add_message(&message).map_err(turn_error)?;
            tracing::info!(target: "ctx::pipeline", step = self.step, tool = %call.name, call_id = %call.id, "tool call over the limit");
            return Ok((message, report));
        }
        let mut budget = ledger.call_budget(call).map_err(turn_error)?;
        budget.content_tokens = budget.content_tokens.saturating_sub(reserve);
        report.content_budget = budget.content_tokens;
        let output = match kind {
            ToolCallKind::Handled => {
                let request = ToolRequest {
                    name: &call.name,
                    call_id: &call.id,
                    arguments: &call.arguments,
                    budget: budget.clone(),
                    state: self.state,
                    step_id: self.step,
                };
                match self.handlers.call(self.step, request).await {
                    Ok(output) => output,
                    // Arguments the model got wrong are the model's to fix: it is told, and may
                    // call again within the limit; any other failure fails the step.
                    Err(source) if invalid_arguments(&*source).is_some() => {
                        let reason = invalid_arguments(&*source).unwrap_or_default();
                        report.kind = ToolCallKind::InvalidArguments;
                        tracing::warn!(target: "ctx::pipeline", step = self.step, tool = %call.name, call_id = %call.id, %reason, "invalid tool arguments");
                        ToolOutput::Text(format!("invalid arguments for `{}`: {reason}", call.name))
                    }
                    Err(source) => {
                        return Err(PipelineError::Tool {
                            step: self.step.to_owned(),
                            tool: call.name.clone(),
                            call_id: call.id.clone(),
                            source,
                        }
                        .into());
                    }
                }
            }
            _ => ToolOutput::Text(unknown_tool_text(self.spec, &call.name)),
        };
        let before = ledger.reserved();
        let message = match output {
            ToolOutput::Documents(documents) => {
                let packed = ledger.pack(&budget, &documents, None).map_err(turn_error)?;
                let message = ledger.record(&call.id, &packed).map_err(turn_error)?;
                report.truncated = packed.included.iter().any(|d| d.inclusion != Inclusion::Whole);
                if report.truncated {
                    tracing::warn!(
                        target: "ctx::pipeline",
                        step = self.step,
                        tool = %call.name,
                        call_id = %call.id,
                        budget = budget.content_tokens,
                        "a retrieved document was cut at a token boundary to fit what the turn has left"
                    );
                }
                report.documents_included = packed.included.into_iter().map(|d| d.id).collect();
                report.duplicates_skipped = packed.duplicates;
                report.left_out = packed.left_out;
                message
            }
            ToolOutput::Text(text) => {
                // What the whole result message may cost: what is left less the rest of the batch.
                let allowed = budget.available.saturating_sub(reserve);
                let (content, truncated) =
                    fit_text(counter, &call.id, answered(calls, call), &text, budget.content_tokens, allowed)?;
                if truncated {
                    tracing::warn!(
                        target: "ctx::pipeline",
                        step = self.step,
                        tool = %call.name,
                        call_id = %call.id,
                        budget = budget.content_tokens,
                        original_bytes = text.len(),
                        kept_bytes = content.len(),
                        "a tool result was cut at a token boundary to fit what the turn has left"
                    );
                }
                report.truncated = truncated;
                let message = ChatMessage::tool_result(call.id.clone(), content);
                ledger.add_message(&message).map_err(turn_error)?;
                message
            }
        };
        report.tokens = ledger.reserved() - before;
        Ok((message, report))
    }
}

/// The function name a result of `call` is framed with: that of the last call of the batch with
/// its id, as the ledger and the chat format resolve a reused id.
fn answered<'c>(calls: &'c [ToolCall], call: &ToolCall) -> Option<&'c str> {
    calls.iter().rev().find(|c| c.id == call.id).map(|c| c.name.as_str())
}

/// The result of a call to a tool the step does not declare.
fn unknown_tool_text(spec: &AgentSpec, name: &str) -> String {
    let names: Vec<String> = spec.tools.iter().map(|t| format!("`{}`", t.name)).collect();
    format!("unknown tool `{name}`; the tools are {}", names.join(", "))
}

/// `text` cut at a token boundary so that its result message costs at most `allowed`: first to
/// `max` tokens, then shorter by the overshoot while the exact cost of the message (BPE is not
/// additive where the content meets its frame) is over. Returns the content and whether it was
/// cut.
fn fit_text(
    counter: &TokenCounter,
    call_id: &str,
    function: Option<&str>,
    text: &str,
    max: usize,
    allowed: usize,
) -> Result<(String, bool), CtxError> {
    let mut max = max;
    loop {
        let content = counter.truncate_to(text, max)?;
        let cost = counter.message_cost(&ChatMessage::tool_result(call_id, content.clone()), function)?;
        if cost <= allowed || content.is_empty() {
            let truncated = content.len() < text.len();
            return Ok((content, truncated));
        }
        max = max.saturating_sub(cost - allowed);
    }
}

/// The reason of a [`ToolRequest::args`](crate::pipeline::ToolRequest::args) error a handler
/// returned (as a `CtxError` or the `PipelineError` inside one), if that is what it is.
fn invalid_arguments(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let pipeline = match error.downcast_ref::<CtxError>() {
        Some(CtxError::Pipeline(p)) => p,
        Some(_) => return None,
        None => error.downcast_ref::<PipelineError>()?,
    };
    match pipeline {
        PipelineError::ToolArguments { reason, .. } => Some(reason.clone()),
        _ => None,
    }
}
