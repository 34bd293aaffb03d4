//! [`McpError`]: what can go wrong talking to an MCP server, each with its code.

use crate::codes::{Code, ErrorCode};

/// An MCP server could not be reached, stopped answering, or answered a tool call with an error
/// or a result too large to take. Each names the server (as the pipeline names it) and, for a
/// call, the tool; what the server wrote on its standard error last is kept in `stderr` (empty
/// for a URL), since that is where servers say why they stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server could not be started, or did not complete the handshake or list its tools.
    #[error("MCP server `{server}` ({transport}) could not be started: {reason}{}", tail(stderr))]
    Start {
        /// The server's name.
        server: String,
        /// Its command line or URL.
        transport: String,
        /// What failed.
        reason: String,
        /// The end of what it wrote on its standard error.
        stderr: String,
    },
    /// The server's connection closed before it answered: its process exited or was killed,
    /// or, for a server reached by URL, the request got no answer (the connection was refused
    /// or dropped: the server stopped).
    #[error(
        "MCP server `{server}` closed its connection during a call of tool `{tool}`{}{}",
        exit(status),
        tail(stderr)
    )]
    Closed {
        /// The server's name.
        server: String,
        /// The tool being called.
        tool: String,
        /// How the process ended, when it did and that is known; for a URL, why no answer came.
        status: Option<String>,
        /// The end of what it wrote on its standard error.
        stderr: String,
    },
    /// The server answered a tool call with a protocol error instead of a result (or did not
    /// answer within [`McpOptions::call_timeout`](method@super::McpOptions::call_timeout)).
    #[error("MCP server `{server}` failed tool `{tool}`: {message}")]
    ToolFailed {
        /// The server's name.
        server: String,
        /// The tool.
        tool: String,
        /// The server's error, or the timeout.
        message: String,
    },
    /// A tool's result is larger than [`McpOptions::max_result_bytes`](method@super::McpOptions::max_result_bytes).
    #[error("the result of tool `{tool}` of MCP server `{server}` is {bytes} bytes, over the limit of {limit} bytes")]
    ResultTooLarge {
        /// The server's name.
        server: String,
        /// The tool.
        tool: String,
        /// The result's size: the text of its content.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// A call reached these connections for a step and tool no connected server offers.
    #[error("agent step `{step}` has no MCP tool `{tool}` among the servers connected")]
    NotConnected {
        /// The agent step.
        step: String,
        /// The tool.
        tool: String,
    },
}

impl ErrorCode for McpError {
    fn code(&self) -> Code {
        match self {
            McpError::Start { .. } => Code::McpServerStart,
            McpError::Closed { .. } => Code::McpServerClosed,
            McpError::ToolFailed { .. } => Code::McpToolFailed,
            McpError::ResultTooLarge { .. } => Code::McpResultTooLarge,
            McpError::NotConnected { .. } => Code::McpServerNotConnected,
        }
    }
}

/// "; its standard error ended with: …", or nothing.
fn tail(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() { String::new() } else { format!("; its standard error ended with:\n{stderr}") }
}

/// " (it exited with …)", or nothing.
fn exit(status: &Option<String>) -> String {
    status.as_deref().map(|s| format!(" (it {s})")).unwrap_or_default()
}
