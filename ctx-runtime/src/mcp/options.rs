//! How the MCP client talks to its servers: where a pipeline's `config.json` is found, how large
//! a tool result may be, and how long a server may take to start and to answer.
//!
//! Apart from `mod.rs` so that a server connection (`server.rs`), which reads these limits, does
//! not depend on the tool set that owns the connections.

use std::time::Duration;

/// How [`McpTools`](super::McpTools) talks to its servers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpOptions {
    /// Where a pipeline's `config.json` is looked up, as [`LoadOptions::base_dir`](crate::pipeline::LoadOptions::base_dir) (by default
    /// the current directory): its `mcp_servers` say where the servers run.
    pub base_dir: Option<std::path::PathBuf>,
    /// The most a tool result's text may hold, in bytes (default 64 MiB): a larger one fails the
    /// call with [`McpError::ResultTooLarge`](super::McpError::ResultTooLarge) rather than being counted. Within it, a result is
    /// cut to the turn's budget. Over standard input and output a result is read whole before
    /// it is measured, so this bounds what is counted and kept, not what is read; over HTTP the
    /// response is not read past six times this (the text escaped in JSON) plus 64 KiB, and
    /// one larger fails the call with [`McpError::ToolFailed`](super::McpError::ToolFailed).
    pub max_result_bytes: usize,
    /// How long a server may take to start, answer the handshake and list its tools (default
    /// 60 s: `npx` may install a package first).
    pub start_timeout: Duration,
    /// How long one tool call may take (default 120 s); a call without an answer by then fails
    /// with [`McpError::ToolFailed`](super::McpError::ToolFailed).
    pub call_timeout: Duration,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            base_dir: None,
            max_result_bytes: 64 * 1024 * 1024,
            start_timeout: Duration::from_secs(60),
            call_timeout: Duration::from_secs(120),
        }
    }
}

impl McpOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the field `base_dir`: load the pipeline with the same.
    #[must_use]
    pub fn base_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// Sets the field `max_result_bytes`.
    #[must_use]
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }

    /// Sets the field `start_timeout`.
    #[must_use]
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    /// Sets the field `call_timeout`.
    #[must_use]
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }
}
