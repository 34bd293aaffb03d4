//! Tools from MCP servers (feature `mcp`), through the official Rust SDK, `rmcp`.
//!
//! An `agent` step names the servers whose tools it offers (`mcp_servers: [ files { command:
//! "node", args: ["server.js", "docs"] } ]`, in `pipeline!`, YAML or a built definition).
//! [`McpTools::connect`] starts every server the steps of a definition name (one process per
//! distinct command line, shared by the steps that declare it), completes the protocol's
//! handshake and lists each server's tools. Then:
//!
//! * **Loading**: [`McpTools::load_options`] hands the listed tools to the loader, which adds
//!   them to their steps after the tools the steps declare, and runs every rule of declared
//!   tools on them, and the budget contract with the model's tool rule: a server whose schemas
//!   no longer fit is a load error naming it and its largest tools (`MCP_TOOLS_DO_NOT_FIT`), a
//!   tool that breaks a rule one naming it (`MCP_TOOL_REJECTED`), never a 400 from the model's
//!   server. A pipeline that names servers and is loaded without their listing does not load
//!   (`MCP_SERVER_NOT_CONNECTED`).
//! * **Running**: `McpTools` is a [`ToolHandlers`](crate::pipeline::ToolHandlers): each call goes to the server that listed the
//!   tool for that step, and the result's content comes back as text, which the agent step cuts
//!   at a token boundary to what the turn has left (the progressive budget), like any tool's. A
//!   result the server marks `isError` is told to the model, as the protocol intends (it may
//!   call again); a protocol error, a server that died ([`McpError::Closed`]) and a result over
//!   [`McpOptions::max_result_bytes`](method@McpOptions::max_result_bytes) fail the step with `AGENT_TOOL_FAILED`, the [`McpError`]
//!   as its source.
//!
//! ```no_run
//! # async fn run(def: ctx::definition::PipelineDef) -> Result<(), Box<dyn std::error::Error>> {
//! use ctx::mcp::{McpOptions, McpTools};
//! use ctx::pipeline::{LoadOptions, LoadedPipeline, StepEnv};
//!
//! let mcp = McpTools::connect(&def, McpOptions::new()).await?;
//! let pipeline = LoadedPipeline::load(def, mcp.load_options(LoadOptions::new()))?;
//! let env = StepEnv::builder().tools(&mcp);
//! # let _ = (pipeline, env);
//! mcp.close().await;
//! # Ok(()) }
//! ```
//!
//! A server declared with a `command` is spawned as a child of this process and spoken to over
//! its standard input and output; it is killed when the connections are dropped or closed. One
//! declared with a `url` is reached over Streamable HTTP (rmcp's client on reqwest, TLS by
//! rustls with the webpki roots, redirects not followed), with `Authorization: Bearer …` from
//! the environment variable its `bearer_token_env` names, read when it is connected; a call that
//! gets no answer from it (the connection refused or dropped) fails as [`McpError::Closed`].

#[doc(inline)]
pub use ctx_runtime::mcp::{McpError, McpOptions, McpTool, McpTools, McpToolsWith};
