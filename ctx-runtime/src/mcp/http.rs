//! A server reached by URL: rmcp's Streamable HTTP client transport on reqwest, and what its
//! errors mean for a call.
//!
//! The client is ctx's own, over plain HTTP: an `https://` server is refused when it is
//! connected (why: the `rmcp` entry of the workspace manifest; put a TLS-terminating proxy on
//! the loopback in front of a remote server, or reach it over stdio). Redirects are not followed (a redirect to another origin would carry the session
//! and the token there), and no idle connections kept (as rmcp's own default client). The
//! bearer token is read from the environment variable the declaration names when the server is
//! connected, and is never part of a message.

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransportConfig, StreamableHttpError};

use crate::pipeline::definition::McpServerSpec;

/// The transport rmcp's client runs on.
pub(super) type Transport = StreamableHttpClientTransport<reqwest_mcp::Client>;

/// The largest JSON response the transport reads for a result of at most `max_result_bytes`
/// bytes of text: the text escaped in JSON may take up to six bytes a byte (`\u0000`), and the
/// envelope a little more. A larger body fails the call as too large, unread.
pub(super) fn max_response_bytes(max_result_bytes: usize) -> usize {
    max_result_bytes.saturating_mul(6).saturating_add(64 * 1024)
}

/// The transport to `url` for `spec`, its token read from the environment; the reason (for
/// `McpError::Start`) when there is no token or no client.
pub(super) fn transport(spec: &McpServerSpec, url: &str, max_result_bytes: usize) -> Result<Transport, String> {
    if url.starts_with("https://") {
        return Err(format!(
            "`{url}` is an `https://` endpoint, and ctx's MCP client speaks plain HTTP only (no TLS in this \
             release); reach the server through a TLS-terminating proxy on 127.0.0.1 (`url: http://127.0.0.1:…`) \
             or over stdio (`command:`)"
        ));
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .max_json_response_size(max_response_bytes(max_result_bytes))
        // A server that ends a session is answered by a new one: ctx keeps no state of its own
        // in a session, and a restarted server then serves the calls that follow.
        .reinit_on_expired_session(true);
    if let Some(variable) = &spec.bearer_token_env {
        config = config.auth_header(bearer_token(variable)?);
    }
    Ok(Transport::with_client(client()?, config))
}

/// The value of `variable`, which must be set and not empty.
fn bearer_token(variable: &str) -> Result<String, String> {
    match std::env::var(variable) {
        Ok(token) if !token.trim().is_empty() => Ok(token.trim().to_owned()),
        Ok(_) => Err(format!("the environment variable `{variable}` (its `bearer_token_env`) is empty")),
        Err(std::env::VarError::NotPresent) => {
            Err(format!("the environment variable `{variable}` (its `bearer_token_env`) is not set"))
        }
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(format!("the environment variable `{variable}` (its `bearer_token_env`) is not UTF-8"))
        }
    }
}

fn client() -> Result<reqwest_mcp::Client, String> {
    reqwest_mcp::Client::builder()
        .redirect(reqwest_mcp::redirect::Policy::none())
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|e| format!("no HTTP client: {e}"))
}

/// What a transport error of a call means.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Failure {
    /// No answer reached ctx: the connection was refused, reset or closed (the server stopped).
    Unreachable(String),
    /// The answer's body is larger than the transport reads.
    TooLarge,
    /// The server answered, with an HTTP error or something else than a result.
    Answered(String),
}

/// The meaning of `error`, an error of a call over this transport.
pub(super) fn failure(error: &rmcp::ServiceError) -> Failure {
    let rmcp::ServiceError::TransportSend(sent) = error else {
        return match error {
            rmcp::ServiceError::TransportClosed => Failure::Unreachable(error.to_string()),
            other => Failure::Answered(other.to_string()),
        };
    };
    let Some(http) = sent.error.downcast_ref::<StreamableHttpError<reqwest_mcp::Error>>() else {
        return Failure::Answered(sent.error.to_string());
    };
    match http {
        StreamableHttpError::ResponseBodyTooLarge { .. } => Failure::TooLarge,
        StreamableHttpError::Client(e) if e.is_connect() || e.is_request() || e.is_body() => {
            Failure::Unreachable(describe(e))
        }
        StreamableHttpError::Io(e) => Failure::Unreachable(e.to_string()),
        StreamableHttpError::UnexpectedEndOfStream | StreamableHttpError::TransportChannelClosed => {
            Failure::Unreachable(http.to_string())
        }
        other => Failure::Answered(other.to_string()),
    }
}

/// Why a handshake or a listing over this transport failed, when an HTTP error is the cause:
/// the client's error with its causes ("error sending request …: Connection refused"), or the
/// server's HTTP answer (a 401 when the token is missing or refused). `None` for other errors.
pub(super) fn cause(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(http) = e.downcast_ref::<StreamableHttpError<reqwest_mcp::Error>>() {
            return Some(match http {
                StreamableHttpError::Client(e) => describe(e),
                other => {
                    let mut text = other.to_string();
                    let mut source = std::error::Error::source(other);
                    while let Some(cause) = source {
                        text.push_str(": ");
                        text.push_str(&cause.to_string());
                        source = cause.source();
                    }
                    text
                }
            });
        }
        current = match e.downcast_ref::<rmcp::service::ClientInitializeError>() {
            // The handshake's transport error is its message, not its source.
            Some(rmcp::service::ClientInitializeError::TransportError { error, .. }) => Some(error),
            _ => e.source(),
        };
    }
    None
}

/// A reqwest error with its causes ("error sending request …: connection refused").
fn describe(error: &reqwest_mcp::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_https_server_is_refused_before_any_request_saying_why() {
        let spec = McpServerSpec::new("remote").url(Some("https://mcp.example.com/mcp".into()));
        let Err(why) = transport(&spec, "https://mcp.example.com/mcp", 1024) else {
            panic!("an https endpoint has no transport");
        };
        assert!(why.contains("plain HTTP only") && why.contains("127.0.0.1"), "{why}");
    }

    // The transport starts its worker task at once: on a runtime, as `McpTools::connect` is.
    #[tokio::test]
    async fn a_token_is_read_from_the_variable_the_declaration_names() {
        let spec = McpServerSpec::new("web").url(Some("http://127.0.0.1:9/mcp".into()));
        // No variable named: no token, and a client (TLS set up with ring) all the same.
        assert!(transport(&spec, "http://127.0.0.1:9/mcp", 1024).is_ok());
        let spec = spec.bearer_token_env(Some("CTX_TEST_MCP_TOKEN_THAT_IS_NEVER_SET".into()));
        let Err(reason) = transport(&spec, "http://127.0.0.1:9/mcp", 1024) else { panic!("no token") };
        assert_eq!(
            reason,
            "the environment variable `CTX_TEST_MCP_TOKEN_THAT_IS_NEVER_SET` (its `bearer_token_env`) is not set"
        );
    }

    #[test]
    fn the_response_limit_holds_a_result_escaped_in_json() {
        assert_eq!(max_response_bytes(1024), 6 * 1024 + 64 * 1024);
        assert_eq!(max_response_bytes(usize::MAX), usize::MAX);
    }
}
