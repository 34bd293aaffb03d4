//! The spans of a model request, named and attributed after OpenTelemetry's semantic conventions
//! for generative AI (`gen_ai.*`), plus ctx's budget attributes (`ctx.budget.*`), so that a
//! `tracing-opentelemetry` layer exports them as a GenAI backend reads them, with no mapping code.
//!
//! `tracing-opentelemetry` turns a span's fields into attributes of the same name and reads three
//! special fields: `otel.name` (the span's name: `chat {model}`, as the conventions name a chat
//! span), `otel.kind` (`client`) and `otel.status_code`. Usage and the finish reason are recorded
//! when the reply arrives. `gen_ai.usage.input_tokens` is the server's count when it reports one,
//! else ctx's exact count; `ctx.budget.prompt_tokens` is always ctx's, so the two can be compared.
//!
//! The conventions' attributes, as the inference span of their current version lists them:
//! `gen_ai.operation.name` and `gen_ai.provider.name` (required; the provider is the model's
//! [`ChatModel::provider_name`](crate::llm::ChatModel::provider_name)), `gen_ai.request.model`,
//! `gen_ai.request.seed` and `gen_ai.output.type` (`json` when a response format is requested),
//! `error.type` when the request failed, and the recommended sampling parameters, output limit,
//! usage and finish reasons.
//!
//! Two of them are arrays of strings (`string[]`): `gen_ai.response.finish_reasons` and
//! `gen_ai.request.stop_sequences`. A `tracing` field holds one value (a number, a bool or text)
//! and has no array, so these are set on the OpenTelemetry span itself, through
//! `tracing-opentelemetry`'s `OpenTelemetrySpanExt::set_attribute`, with feature `otel`
//! ([`ARRAY_ATTRIBUTES`]); that reaches any `tracing-opentelemetry` 0.34 layer, ctx's
//! [`OtlpTracing`](super::OtlpTracing) or the program's own. The finish reason is also a plain
//! field, `ctx.response.finish_reason`, for every other subscriber.

use tracing::Span;
use tracing::field::Empty;

use crate::llm::{ChatResponse, ModelError, ModelParams};

use super::anatomy::{PartKind, RequestAnatomy};

/// The attribute names this module writes as `tracing` fields, for documentation and tests.
pub const REQUEST_ATTRIBUTES: &[&str] = &[
    "gen_ai.operation.name",
    "gen_ai.provider.name",
    "gen_ai.request.model",
    "gen_ai.request.max_tokens",
    "gen_ai.request.temperature",
    "gen_ai.request.top_p",
    "gen_ai.request.presence_penalty",
    "gen_ai.request.frequency_penalty",
    "gen_ai.request.seed",
    "gen_ai.output.type",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "error.type",
    "ctx.response.finish_reason",
    "ctx.step.id",
    "ctx.budget.context_window",
    "ctx.budget.prompt_tokens",
    "ctx.budget.max_output_tokens",
    "ctx.budget.safety_margin_tokens",
    "ctx.budget.free_tokens",
    "ctx.budget.worst_case_tokens",
    "ctx.budget.parts.system",
    "ctx.budget.parts.tools",
    "ctx.budget.parts.history",
    "ctx.budget.parts.context",
    "ctx.budget.parts.question",
    "ctx.budget.parts.tool_turn",
    "ctx.budget.parts.chat_format",
];

/// The conventions' array attributes (`string[]`), which a `tracing` field cannot hold: set on
/// the OpenTelemetry span with feature `otel` (see the module documentation).
pub const ARRAY_ATTRIBUTES: &[&str] = &["gen_ai.response.finish_reasons", "gen_ai.request.stop_sequences"];

/// The span of one chat request of step `step` to `model`, with what is known before it is sent:
/// the window's figures of `anatomy` (its parts are recorded by [`record_parts`], when a
/// subscriber takes the span).
pub(crate) fn request_span(
    model: &str,
    provider: &str,
    step: &str,
    anatomy: &RequestAnatomy,
    params: &ModelParams,
    worst_case: Option<usize>,
) -> Span {
    let span = tracing::info_span!(
        target: "ctx::llm",
        "gen_ai.chat",
        otel.name = %format!("chat {model}"),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = %provider,
        gen_ai.request.model = %model,
        gen_ai.request.max_tokens = int(anatomy.max_output_tokens),
        gen_ai.request.temperature = Empty,
        gen_ai.request.top_p = Empty,
        gen_ai.request.presence_penalty = Empty,
        gen_ai.request.frequency_penalty = Empty,
        gen_ai.request.seed = Empty,
        gen_ai.output.type = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
        ctx.response.finish_reason = Empty,
        ctx.step.id = %step,
        ctx.budget.context_window = int(anatomy.context_window),
        ctx.budget.prompt_tokens = int(anatomy.prompt_tokens),
        ctx.budget.max_output_tokens = int(anatomy.max_output_tokens),
        ctx.budget.safety_margin_tokens = int(anatomy.margin_in_window()),
        ctx.budget.free_tokens = int(anatomy.free_tokens()),
        ctx.budget.worst_case_tokens = Empty,
        ctx.budget.parts.system = Empty,
        ctx.budget.parts.tools = Empty,
        ctx.budget.parts.history = Empty,
        ctx.budget.parts.context = Empty,
        ctx.budget.parts.question = Empty,
        ctx.budget.parts.tool_turn = Empty,
        ctx.budget.parts.chat_format = Empty,
    );
    if let Some(t) = params.temperature {
        span.record("gen_ai.request.temperature", t);
    }
    if let Some(p) = params.top_p {
        span.record("gen_ai.request.top_p", p);
    }
    if let Some(p) = params.presence_penalty {
        span.record("gen_ai.request.presence_penalty", p);
    }
    if let Some(p) = params.frequency_penalty {
        span.record("gen_ai.request.frequency_penalty", p);
    }
    if let Some(s) = params.seed {
        span.record("gen_ai.request.seed", s);
    }
    // Both response formats ask for JSON (an object, or one of a schema).
    if params.response_format.is_some() {
        span.record("gen_ai.output.type", "json");
    }
    if !params.stop.is_empty() {
        set_strings(&span, "gen_ai.request.stop_sequences", &params.stop);
    }
    if let Some(w) = worst_case {
        span.record("ctx.budget.worst_case_tokens", int(w));
    }
    span
}

/// Records the parts of the request's prompt on its span: their tokens by kind, adding up to
/// `ctx.budget.prompt_tokens` (a request counted whole counts as its question).
pub(crate) fn record_parts(span: &Span, anatomy: &RequestAnatomy) {
    let parts = [
        ("ctx.budget.parts.system", anatomy.tokens_of(PartKind::System)),
        ("ctx.budget.parts.tools", anatomy.tokens_of(PartKind::Tools)),
        ("ctx.budget.parts.history", anatomy.tokens_of(PartKind::History)),
        ("ctx.budget.parts.context", anatomy.tokens_of(PartKind::Context)),
        ("ctx.budget.parts.question", anatomy.tokens_of(PartKind::Question) + anatomy.tokens_of(PartKind::Unsplit)),
        ("ctx.budget.parts.tool_turn", anatomy.tokens_of(PartKind::ToolTurn)),
        ("ctx.budget.parts.chat_format", anatomy.tokens_of(PartKind::ChatFormat)),
    ];
    for (name, tokens) in parts {
        span.record(name, int(tokens));
    }
}

/// A count as OpenTelemetry's integer attribute: `tracing-opentelemetry` exports a `u64` field as
/// a string, an `i64` as an integer.
fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Records the reply's usage and finish reason on the request's span, or the error's type and
/// the error status.
pub(crate) fn record_response(span: &Span, prompt_tokens: usize, response: &Result<ChatResponse, ModelError>) {
    match response {
        Ok(r) => {
            let input = r.usage.map_or(prompt_tokens, |u| u.prompt_tokens);
            span.record("gen_ai.usage.input_tokens", int(input));
            if let Some(u) = r.usage {
                span.record("gen_ai.usage.output_tokens", int(u.completion_tokens));
            }
            if let Some(reason) = &r.finish_reason {
                span.record("ctx.response.finish_reason", reason.as_str());
                // One reply per request (ctx never asks for several choices): one reason.
                set_strings(span, "gen_ai.response.finish_reasons", std::slice::from_ref(reason));
            }
        }
        Err(e) => {
            span.record("error.type", error_type(e).as_str());
            span.record("otel.status_code", "ERROR");
        }
    }
}

/// The conventions' `error.type` of a failed request: low-cardinality, the server's HTTP status
/// when it answered with one, else the kind of failure.
pub(crate) fn error_type(error: &ModelError) -> String {
    let kind = match error {
        ModelError::RetriesExhausted { last, .. } => return error_type(last),
        ModelError::Http { status, .. } => return status.to_string(),
        ModelError::ContextLengthExceeded { .. } => "context_length_exceeded",
        ModelError::Failed { .. } => "failed",
        ModelError::Config(_) => "config",
        ModelError::Connect { .. } => "connect",
        ModelError::Transport { .. } => "transport",
        ModelError::Timeout { .. } => "timeout",
        ModelError::RateLimited { .. } => "rate_limited",
        ModelError::MalformedBody { .. } => "malformed_body",
        ModelError::TruncatedBody { .. } => "truncated_body",
        ModelError::EmptyChoices { .. } => "empty_choices",
        ModelError::UnsupportedRequest { .. } => "unsupported_request",
        ModelError::Tokenizer { .. } => "tokenizer",
    };
    kind.to_owned()
}

/// Sets `values` as the string-array attribute `key` of the OpenTelemetry span behind `span`
/// (see the module documentation); without feature `otel` there is no such span to set it on.
#[cfg(feature = "otel")]
fn set_strings(span: &Span, key: &'static str, values: &[String]) {
    use opentelemetry::{Array, StringValue, Value};
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let values: Vec<StringValue> = values.iter().map(|v| StringValue::from(v.clone())).collect();
    span.set_attribute(key, Value::Array(Array::String(values)));
}

#[cfg(not(feature = "otel"))]
fn set_strings(_span: &Span, _key: &'static str, _values: &[String]) {}

/// The span of a whole run (a question) of `pipeline`, from `next_step` to the end: the parent
/// of its steps' spans (`ctx.step`) and their requests' (`gen_ai.chat`).
pub(crate) fn run_span(pipeline: &str, next_step: &str) -> Span {
    tracing::info_span!(
        target: "ctx::pipeline",
        "ctx.run",
        otel.name = %format!("run {pipeline}"),
        ctx.pipeline = %pipeline,
        ctx.run.from_step = %next_step,
    )
}

#[cfg(test)]
#[path = "trace_tests.rs"]
mod tests;
