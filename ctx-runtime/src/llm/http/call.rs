//! A call of an HTTP client: the attempts of one request under the client's retry policy, each
//! attempt's error cleared of the key before it is logged, retried or returned; for a model call
//! (one [`ChatRequest`]), in one `model_call` span with the reply's usage logged. What
//! [`ChatModel::chat`] and [`ChatModel::chat_stream`] of every HTTP client are, given the body
//! the client wrote.
//!
//! [`ChatModel::chat`]: crate::llm::ChatModel::chat
//! [`ChatModel::chat_stream`]: crate::llm::ChatModel::chat_stream

use std::future::Future;
use std::sync::{Mutex, PoisonError};

use serde::Serialize;
use tracing::Instrument;

use super::attempt::{self, Api};
use super::failure::redact_error;
use super::retry::{Failed, retrying};
use super::sse::EventStream;
use crate::llm::{ChatRequest, ChatResponse, ModelError};

/// Sends `body` (written for `request`) to `url` and reads the whole reply with `read`, retried.
pub(crate) async fn chat(
    api: &impl Api,
    url: &str,
    request: &ChatRequest,
    body: &(impl Serialize + Sync + ?Sized),
    read: impl Fn(&[u8]) -> Result<ChatResponse, ModelError> + Sync,
) -> Result<ChatResponse, ModelError> {
    let s = api.settings();
    logged(request, send(api, url, body, read)).instrument(span(s.model, url, request, false)).await
}

/// Sends `body` to `url` and reads the whole reply with `read`, retried; untraced (a model
/// call's span and log are [`chat`]'s).
pub(crate) async fn send<T>(
    api: &impl Api,
    url: &str,
    body: &(impl Serialize + Sync + ?Sized),
    read: impl Fn(&[u8]) -> Result<T, ModelError> + Sync,
) -> Result<T, ModelError> {
    let s = api.settings();
    let read = &read;
    retrying(s.retry, s.model, || async move {
        attempt::send(api, url, body, read).await.map_err(|e| Failed::from(redact_error(s.key, e)))
    })
    .await
}

/// Streams the reply to `body` (written for `request`) from `url`, each attempt into a fresh
/// `new_state()`; retried only while no text has reached `on_token`: a retry would hand it over
/// twice.
pub(crate) async fn chat_stream<S: EventStream>(
    api: &impl Api,
    url: &str,
    request: &ChatRequest,
    body: &(impl Serialize + Sync + ?Sized),
    new_state: impl Fn() -> S + Sync,
    read: impl Fn(&[u8]) -> Result<ChatResponse, ModelError> + Sync,
    on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
) -> Result<ChatResponse, ModelError> {
    let s = api.settings();
    let (read, new_state) = (&read, &new_state);
    // Each attempt borrows the caller's callback in turn (one at a time: the next starts after
    // the last has ended), which a closure that makes the attempts can only lend through a lock.
    let on_token = Mutex::new(on_token);
    let on_token = &on_token;
    let attempts = retrying(s.retry, s.model, || async move {
        let mut emitted = false;
        let mut forward = |piece: &str| {
            emitted = true;
            let mut callback = on_token.lock().unwrap_or_else(PoisonError::into_inner);
            (*callback)(piece);
        };
        let outcome = attempt::stream(api, url, body, new_state(), read, &mut forward).await;
        outcome.map_err(|e| Failed { error: redact_error(s.key, e), may_retry: !emitted })
    });
    logged(request, attempts).instrument(span(s.model, url, request, true)).await
}

/// The reply of `attempts`, its usage logged (in the call's span).
async fn logged(
    request: &ChatRequest,
    attempts: impl Future<Output = Result<ChatResponse, ModelError>>,
) -> Result<ChatResponse, ModelError> {
    let reply = attempts.await?;
    log_reply(request, &reply);
    Ok(reply)
}

fn span(model: &str, url: &str, request: &ChatRequest, stream: bool) -> tracing::Span {
    tracing::info_span!(
        target: "ctx::llm",
        "model_call",
        model = %model,
        endpoint = %url,
        step = request.step_id.as_deref(),
        stream,
        max_tokens = request.max_tokens,
    )
}

fn log_reply(request: &ChatRequest, reply: &ChatResponse) {
    let reported = reply.usage.map(|u| u.prompt_tokens);
    if let (Some(predicted), Some(reported)) = (request.predicted_prompt_tokens, reported)
        && predicted != reported
    {
        tracing::debug!(
            target: "ctx::llm",
            predicted,
            reported,
            "the server counted the prompt differently from ctx (its chat template or tokenizer differs)"
        );
    }
    tracing::debug!(
        target: "ctx::llm",
        prompt_tokens = reported,
        completion_tokens = reply.usage.map(|u| u.completion_tokens),
        reasoning_tokens = reply.usage.and_then(|u| u.reasoning_tokens),
        reasoning_items = reply.thinking.len(),
        finish_reason = reply.finish_reason.as_deref(),
        "model replied"
    );
}
