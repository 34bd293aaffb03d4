//! Turning what went wrong on the wire into a [`ModelError`]: error bodies of the different
//! servers, `Retry-After`, transport errors and unparsable bodies.
//!
//! Error bodies seen in the wild:
//! - OpenAI: `{"error": {"message", "type", "param", "code": "context_length_exceeded"}}`
//! - vLLM: the same shape with a numeric `code`, or (older) the fields at the top level with
//!   `"object": "error"`; context errors say "maximum context length" or "longer than the maximum
//!   model length"
//! - llama.cpp: `{"error": {"code": 400, "message", "type": "exceed_context_size_error"}}`
//! - Ollama: `{"error": "message"}`
//! - proxies: plain text or HTML.

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::llm::ModelError;
use crate::llm::secret::{ApiKey, redact_with};

/// How many bytes of a body an error quotes.
const EXCERPT_BYTES: usize = 300;

/// What the server said in an error body.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ServerError {
    pub(crate) message: String,
    pub(crate) error_type: Option<String>,
    pub(crate) code: Option<String>,
}

impl ServerError {
    /// Reads the error out of a body of any of the known shapes; falls back to the body's text.
    pub(crate) fn parse(body: &[u8]) -> Self {
        if let Ok(value) = serde_json::from_slice::<Value>(body)
            && let Some(found) = Self::from_json(&value)
        {
            return found;
        }
        ServerError { message: excerpt(body).trim().to_owned(), ..Default::default() }
    }

    /// The error of a JSON value, when it is an error object.
    pub(crate) fn from_json(value: &Value) -> Option<Self> {
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        match value.get("error") {
            Some(Value::String(message)) => Some(ServerError { message: message.clone(), ..Default::default() }),
            Some(err @ Value::Object(_)) => Some(ServerError {
                message: text(err.get("message")).unwrap_or_else(|| err.to_string()),
                error_type: text(err.get("type")),
                code: text(err.get("code")),
            }),
            _ if value.get("object").and_then(Value::as_str) == Some("error") => Some(ServerError {
                message: text(value.get("message")).unwrap_or_else(|| value.to_string()),
                error_type: text(value.get("type")),
                code: text(value.get("code")),
            }),
            _ => None,
        }
    }

    /// Whether this is the server's "context length exceeded".
    pub(crate) fn is_context_length(&self) -> bool {
        crate::llm::error::is_context_length(self.code.as_deref(), self.error_type.as_deref(), &self.message)
    }

    /// The typed error for this server error received with `status` (a 200 when a stream or an
    /// otherwise successful body carried it).
    pub(crate) fn into_model_error(
        self,
        model: &str,
        status: StatusCode,
        retry_after: Option<Duration>,
        key: Option<&ApiKey>,
    ) -> ModelError {
        let model = model.to_owned();
        let message = redact_with(key, &self.message).into_owned();
        let message =
            if message.is_empty() { status.canonical_reason().unwrap_or("no message").to_owned() } else { message };
        if self.is_context_length() {
            return ModelError::ContextLengthExceeded { model, message };
        }
        // A quota error is a 429 that no wait will fix.
        if status == StatusCode::TOO_MANY_REQUESTS && self.code.as_deref() != Some("insufficient_quota") {
            return ModelError::RateLimited { model, message, retry_after };
        }
        ModelError::Http { model, status: status.as_u16(), message, error_type: self.error_type, error_code: self.code }
    }
}

/// The error for a non-success response.
pub(crate) fn status_error(
    model: &str,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    key: Option<&ApiKey>,
) -> ModelError {
    ServerError::parse(body).into_model_error(model, status, retry_after(headers, SystemTime::now()), key)
}

/// The wait the server asks for: `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as
/// an HTTP date (relative to `now`).
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return if secs.is_finite() && secs >= 0.0 { Duration::try_from_secs_f64(secs).ok() } else { None };
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// `err` with every echo of the API key removed from the text it quotes (the texts taken from a
/// body; server messages are redacted when they are read).
pub(crate) fn redact_error(key: Option<&ApiKey>, err: ModelError) -> ModelError {
    let Some(key) = key else { return err };
    match err {
        ModelError::MalformedBody { model, message, excerpt } => ModelError::MalformedBody {
            model,
            message: key.redact(&message).into_owned(),
            excerpt: key.redact(&excerpt).into_owned(),
        },
        ModelError::TruncatedBody { model, message, received_bytes } => {
            ModelError::TruncatedBody { model, message: key.redact(&message).into_owned(), received_bytes }
        }
        other => other,
    }
}

/// The error for a body that arrived whole but does not parse.
pub(crate) fn parse_error(model: &str, body: &[u8], err: &serde_json::Error) -> ModelError {
    if err.is_eof() {
        ModelError::TruncatedBody {
            model: model.to_owned(),
            message: format!("the JSON ends before it is complete ({err})"),
            received_bytes: body.len(),
        }
    } else {
        ModelError::MalformedBody { model: model.to_owned(), message: err.to_string(), excerpt: excerpt(body) }
    }
}

/// The start of a body, lossily decoded, for error messages.
pub(crate) fn excerpt(body: &[u8]) -> String {
    let mut end = body.len().min(EXCERPT_BYTES);
    // Cut on a character boundary where the bytes are UTF-8.
    while end > 0 && end < body.len() && (body[end] & 0b1100_0000) == 0b1000_0000 {
        end -= 1;
    }
    String::from_utf8_lossy(&body[..end]).into_owned()
}

/// The largest response body a client reads (a model's reply is far smaller; anything larger is
/// a misbehaving server, not a reply).
pub(crate) const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Reads a whole body; each chunk must arrive within `idle` when given (the request's own timeout
/// covers the rest). `transport` makes the client's error for a failure of reqwest.
pub(crate) async fn read_body(
    response: &mut reqwest::Response,
    model: &str,
    phase: Phase,
    idle: Option<Duration>,
    transport: impl Fn(&reqwest::Error, Phase, usize) -> ModelError,
) -> Result<Vec<u8>, ModelError> {
    let mut body = Vec::new();
    loop {
        let next =
            match idle {
                Some(limit) => tokio::time::timeout(limit, response.chunk())
                    .await
                    .map_err(|_| ModelError::Timeout { model: model.to_owned(), phase: phase.name, limit })?,
                None => response.chunk().await,
            };
        match next {
            Ok(Some(chunk)) => {
                body.extend_from_slice(&chunk);
                if body.len() > MAX_BODY_BYTES {
                    return Err(ModelError::MalformedBody {
                        model: model.to_owned(),
                        message: format!("the body is larger than {MAX_BODY_BYTES} bytes"),
                        excerpt: excerpt(&body),
                    });
                }
            }
            Ok(None) => return Ok(body),
            Err(e) => return Err(transport(&e, phase, body.len())),
        }
    }
}

/// What a request was waiting for when a transport error happened.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Phase {
    pub(crate) name: &'static str,
    pub(crate) limit: Duration,
}

/// The error for a failure of reqwest. Connect timeouts are reported against `connect_limit`.
pub(crate) fn transport_error(
    model: &str,
    url: &str,
    err: &reqwest::Error,
    phase: Phase,
    connect_limit: Duration,
    received_bytes: usize,
    key: Option<&ApiKey>,
) -> ModelError {
    let model = model.to_owned();
    if err.is_timeout() {
        let phase = if err.is_connect() { Phase { name: "connect", limit: connect_limit } } else { phase };
        return ModelError::Timeout { model, phase: phase.name, limit: phase.limit };
    }
    let message = redact_with(key, &error_chain(err)).into_owned();
    if err.is_connect() {
        ModelError::Connect { model, url: url.to_owned(), message }
    } else if err.is_body() || err.is_decode() {
        ModelError::TruncatedBody { model, message, received_bytes }
    } else {
        ModelError::Transport { model, url: url.to_owned(), message }
    }
}

/// The error and its causes, `: `-joined (reqwest's own message alone says little). The URL is
/// left out: the caller names it once.
fn error_chain(err: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(err);
    while let Some(e) = source {
        let text = e.to_string();
        if !parts.contains(&text) {
            parts.push(text);
        }
        source = e.source();
    }
    if parts.is_empty() { "request failed".to_owned() } else { parts.join(": ") }
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;
    use crate::codes::ErrorCode;

    fn classify(status: u16, body: &str) -> ModelError {
        let status = StatusCode::from_u16(status).expect("valid status");
        status_error("m", status, &HeaderMap::new(), body.as_bytes(), None)
    }

    #[test]
    fn context_length_errors_of_each_server() {
        let openai = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        let vllm_old = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).","type":"BadRequestError","param":null,"code":400}"#;
        let vllm_new = r#"{"error":{"message":"The decoder prompt (length 5000) is longer than the maximum model length of 4096.","type":"BadRequestError","param":null,"code":400}}"#;
        let llama = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#;
        let llama_old_500 = r#"{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"server_error"}}"#;
        for (status, body) in [(400, openai), (400, vllm_old), (400, vllm_new), (400, llama), (500, llama_old_500)] {
            let err = classify(status, body);
            assert_eq!(err.code(), "MODEL_CONTEXT_LENGTH_EXCEEDED", "{body}");
            assert!(!err.is_retryable());
        }
    }

    #[test]
    fn other_errors_keep_status_message_type_and_code() {
        let err = classify(
            401,
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
        );
        assert_eq!(
            err,
            ModelError::Http {
                model: "m".into(),
                status: 401,
                message: "Incorrect API key provided".into(),
                error_type: Some("invalid_request_error".into()),
                error_code: Some("invalid_api_key".into()),
            }
        );
        let ollama = classify(404, r#"{"error":"model \"llama9\" not found, try pulling it first"}"#);
        assert!(ollama.to_string().contains("model \"llama9\" not found"), "{ollama}");
        let html = classify(502, "<html>Bad Gateway</html>");
        assert!(html.to_string().contains("HTTP 502: <html>Bad Gateway</html>"), "{html}");
        assert!(html.is_retryable());
        let empty = classify(503, "");
        assert!(empty.to_string().contains("Service Unavailable"), "{empty}");
    }

    #[test]
    fn quota_429_is_not_a_rate_limit() {
        let limited = classify(429, r#"{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}"#);
        assert_eq!(limited.code(), "MODEL_RATE_LIMITED");
        let quota =
            classify(429, r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#);
        assert_eq!(quota.code(), "MODEL_HTTP_STATUS");
        assert!(!quota.is_retryable());
    }

    #[test]
    fn echoed_keys_are_redacted() {
        let key = ApiKey::new("sk-live-123").expect("non-empty");
        let err = status_error(
            "m",
            StatusCode::UNAUTHORIZED,
            &HeaderMap::new(),
            br#"{"error":{"message":"bad key sk-live-123"}}"#,
            Some(&key),
        );
        assert!(!err.to_string().contains("sk-live-123"), "{err}");
        assert!(err.to_string().contains("[REDACTED]"), "{err}");
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h, now), None);
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(7)));
        h.insert("retry-after", HeaderValue::from_static("1.5"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(1500)));
        h.insert("retry-after", HeaderValue::from_static("-3"));
        assert_eq!(retry_after(&h, now), None);
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now), None);
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        h.insert("retry-after", HeaderValue::from_str(&later).expect("ascii"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(30)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(30));
        h.insert("retry-after", HeaderValue::from_str(&past).expect("ascii"));
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(250)));
    }

    #[test]
    fn unparsable_bodies() {
        let cut = br#"{"choices":[{"message":{"content":"hel"#;
        let err = serde_json::from_slice::<Value>(cut).expect_err("cut");
        assert_eq!(parse_error("m", cut, &err).code(), "MODEL_TRUNCATED_BODY");
        let junk = b"<html>oops</html>";
        let err = serde_json::from_slice::<Value>(junk).expect_err("junk");
        let e = parse_error("m", junk, &err);
        assert_eq!(e.code(), "MODEL_MALFORMED_BODY");
        assert!(e.to_string().contains("<html>oops</html>"), "{e}");
        assert_eq!(excerpt("é".repeat(400).as_bytes()).len(), 300);
    }
}
