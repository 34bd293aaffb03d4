//! One attempt at a request to a model API, the part every HTTP client shares: send the POST,
//! read the whole body or the event stream within the configured timeouts, and turn whatever
//! went wrong into a [`ModelError`]. A client tells it only what is its own ([`Api`]: its headers
//! and its error wordings) and how its replies read (a parser of a whole body, an
//! [`EventStream`]); the retries around an attempt are `super::retry`'s.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde::Serialize;
use serde_json::Value;

use super::RetryPolicy;
use super::failure::{self, MAX_BODY_BYTES, Phase, ServerError, parse_error};
use super::sse::{EventError, EventStream, SseParser};
use crate::llm::secret::ApiKey;
use crate::llm::{ChatResponse, ModelError};

/// What a client sends under: the model named in errors, the key to keep out of them, the
/// timeouts and the retry policy of its configuration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings<'a> {
    pub(crate) model: &'a str,
    pub(crate) key: Option<&'a ApiKey>,
    pub(crate) retry: &'a RetryPolicy,
    /// The limit on a whole exchange (a stream: on its response head).
    pub(crate) request_timeout: Duration,
    /// The limit on connecting, which a connect timeout is reported against.
    pub(crate) connect_timeout: Duration,
    /// The longest silence between two chunks of a stream.
    pub(crate) stream_idle_timeout: Duration,
}

impl<'a> Settings<'a> {
    /// The settings of a configuration's `model`, `key`, `retry` and its `request_timeout`,
    /// `connect_timeout` and `stream_idle_timeout`, in that order.
    pub(crate) fn new(
        model: &'a str,
        key: Option<&'a ApiKey>,
        retry: &'a RetryPolicy,
        [request_timeout, connect_timeout, stream_idle_timeout]: [Duration; 3],
    ) -> Self {
        Settings { model, key, retry, request_timeout, connect_timeout, stream_idle_timeout }
    }
}

/// An HTTP model API client, as the shared attempt and retry driver see it.
pub(crate) trait Api: Sync {
    /// The settings of its configuration.
    fn settings(&self) -> Settings<'_>;

    /// A POST to `url` with the API's headers (its key, its version); the body is added after.
    fn post(&self, url: &str) -> reqwest::RequestBuilder;

    /// The error of a non-success response to a POST to `url`. The default is the shared
    /// classification (`failure::status_error`).
    fn status_error(&self, _url: &str, status: StatusCode, headers: &HeaderMap, body: &[u8]) -> ModelError {
        let s = self.settings();
        failure::status_error(s.model, status, headers, body, s.key)
    }

    /// The error of an error object that came inside a successful response (a whole body or a
    /// stream's event). The default classifies it as received with status 200.
    fn server_error(&self, err: ServerError) -> ModelError {
        let s = self.settings();
        err.into_model_error(s.model, StatusCode::OK, None, s.key)
    }
}

/// The JSON of a whole successful body, or the typed error of the error object it carries.
pub(crate) fn json_body(api: &impl Api, body: &[u8]) -> Result<Value, ModelError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| parse_error(api.settings().model, body, &e))?;
    match ServerError::from_json(&value) {
        Some(err) => Err(api.server_error(err)),
        None => Ok(value),
    }
}

/// One non-streaming POST of `body` to `url`: the reply `read` makes of a successful body, else
/// the typed error.
pub(crate) async fn send<T>(
    api: &impl Api,
    url: &str,
    body: &(impl Serialize + ?Sized),
    read: impl FnOnce(&[u8]) -> Result<T, ModelError>,
) -> Result<T, ModelError> {
    let s = api.settings();
    let phase = Phase { name: "response", limit: s.request_timeout };
    let mut response = api
        .post(url)
        .json(body)
        .timeout(s.request_timeout)
        .send()
        .await
        .map_err(|e| transport(api, url, &e, phase, 0))?;
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = read_body(api, url, &mut response, phase, None).await?;
    if !status.is_success() {
        return Err(api.status_error(url, status, &headers, &bytes));
    }
    read(&bytes)
}

/// One streaming POST of `body` to `url`: its events applied to `state` as they arrive (text to
/// `on_token`), the reply `state` ends with. A server that ignored the request to stream and sent
/// a whole body is read with `read`, its text handed over at once.
pub(crate) async fn stream<S: EventStream>(
    api: &impl Api,
    url: &str,
    body: &(impl Serialize + ?Sized),
    mut state: S,
    read: impl FnOnce(&[u8]) -> Result<ChatResponse, ModelError>,
    on_token: &mut (dyn FnMut(&str) + Send),
) -> Result<ChatResponse, ModelError> {
    let s = api.settings();
    let head = Phase { name: "response", limit: s.request_timeout };
    let idle = Phase { name: "stream chunk", limit: s.stream_idle_timeout };
    let send = api.post(url).json(body).header(ACCEPT, "text/event-stream").send();
    let mut response = tokio::time::timeout(head.limit, send)
        .await
        .map_err(|_| timeout(s.model, head))?
        .map_err(|e| transport(api, url, &e, head, 0))?;
    let status = response.status();
    if !status.is_success() {
        let headers = response.headers().clone();
        let bytes = read_body(api, url, &mut response, idle, Some(idle.limit)).await?;
        return Err(api.status_error(url, status, &headers, &bytes));
    }
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        let bytes = read_body(api, url, &mut response, idle, Some(idle.limit)).await?;
        let reply = read(&bytes)?;
        if !reply.content.is_empty() {
            on_token(&reply.content);
        }
        return Ok(reply);
    }
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    let mut received = 0usize;
    'read: loop {
        let chunk = match tokio::time::timeout(idle.limit, response.chunk()).await {
            Err(_) => return Err(timeout(s.model, idle)),
            Ok(Err(e)) => return Err(transport(api, url, &e, idle, received)),
            Ok(Ok(None)) => break,
            Ok(Ok(Some(chunk))) => chunk,
        };
        received += chunk.len();
        if received > MAX_BODY_BYTES {
            return Err(ModelError::MalformedBody {
                model: s.model.to_owned(),
                message: format!("the stream is larger than {MAX_BODY_BYTES} bytes"),
                excerpt: failure::excerpt(&chunk),
            });
        }
        parser.push(&chunk, &mut events);
        for event in events.drain(..) {
            state.on_event(&event, on_token).map_err(|e| event_error::<S>(api, e))?;
            if state.is_done() {
                break 'read;
            }
        }
    }
    state.finish(s.model, received)
}

/// The typed error of an event the stream could not use.
fn event_error<S: EventStream>(api: &impl Api, err: EventError) -> ModelError {
    match err {
        EventError::Server(e) => api.server_error(e),
        EventError::Malformed { message, excerpt } => ModelError::MalformedBody {
            model: api.settings().model.to_owned(),
            message: format!("{}: {message}", S::EVENT),
            excerpt,
        },
    }
}

/// Reads a whole body; each chunk must arrive within `idle` when given (the request's own
/// timeout covers the rest).
async fn read_body(
    api: &impl Api,
    url: &str,
    response: &mut reqwest::Response,
    phase: Phase,
    idle: Option<Duration>,
) -> Result<Vec<u8>, ModelError> {
    failure::read_body(response, api.settings().model, phase, idle, |e, p, n| transport(api, url, e, p, n)).await
}

/// The error of a failure of reqwest during a POST to `url`.
fn transport(api: &impl Api, url: &str, err: &reqwest::Error, phase: Phase, received_bytes: usize) -> ModelError {
    let s = api.settings();
    failure::transport_error(s.model, url, err, phase, s.connect_timeout, received_bytes, s.key)
}

fn timeout(model: &str, phase: Phase) -> ModelError {
    ModelError::Timeout { model: model.to_owned(), phase: phase.name, limit: phase.limit }
}
