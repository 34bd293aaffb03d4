//! Tools from MCP servers (feature `mcp`), through the official Rust SDK, `rmcp`.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::mcp`.

mod error;
mod http;
mod options;
mod server;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub use error::McpError;
pub use options::McpOptions;

use crate::config::{ConfigFile, apply_config_mcp_servers};
use crate::pipeline::definition::{ModelSource, PipelineDef, StepKind, ToolSpec};
use crate::pipeline::mcp_listing::ListedTools;
use crate::pipeline::{BoxError, LoadOptions, ToolHandlers, ToolHandlersDyn, ToolOutput, ToolRequest};
use server::Server;

/// One tool an MCP server listed for an agent step.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpTool {
    /// The agent step.
    pub step: String,
    /// The server, as the step names it.
    pub server: String,
    /// The tool, as the model is offered it (its name, description and parameters schema).
    pub tool: ToolSpec,
}

/// Connections to the MCP servers of a definition's agent steps, with the tools each listed;
/// the [`ToolHandlers`] of those steps' MCP tools.
#[derive(Debug)]
pub struct McpTools {
    servers: Vec<Server>,
    /// Per agent step and server name (as the step names it), the server's index.
    by_step: Vec<(String, String, usize)>,
    /// Which server answers a step's tool.
    routes: BTreeMap<(String, String), usize>,
    options: McpOptions,
}

impl McpTools {
    /// Starts every MCP server the agent steps of `def` name and lists their tools. Steps that
    /// declare the same command line (or URL) share one server. The first server that cannot be
    /// started, answer the handshake or list its tools is the error; those already started are
    /// stopped.
    pub async fn connect(def: &PipelineDef, options: McpOptions) -> Result<McpTools, McpError> {
        let placed = placed_by_config(def, &options);
        let def = placed.as_ref().unwrap_or(def);
        let mut tools = McpTools { servers: Vec::new(), by_step: Vec::new(), routes: BTreeMap::new(), options };
        for step in &def.steps {
            let StepKind::Agent(spec) = &step.kind else { continue };
            for declared in &spec.mcp_servers {
                let same = |s: &Server| {
                    s.spec.command == declared.command
                        && s.spec.args == declared.args
                        && s.spec.url == declared.url
                        && s.spec.bearer_token_env == declared.bearer_token_env
                };
                let index = match tools.servers.iter().position(same) {
                    Some(i) => i,
                    None => match Server::start(declared, &tools.options).await {
                        Ok(server) => {
                            tools.servers.push(server);
                            tools.servers.len() - 1
                        }
                        Err(e) => {
                            tools.close().await;
                            return Err(e);
                        }
                    },
                };
                tools.by_step.push((step.id.clone(), declared.name.clone(), index));
                for tool in &tools.servers[index].tools {
                    if declared.tools.is_empty() || declared.tools.contains(&tool.name) {
                        tools.routes.entry((step.id.clone(), tool.name.clone())).or_insert(index);
                    }
                }
            }
        }
        Ok(tools)
    }

    /// `opts` with the tools the servers listed, for loading the definition they were connected
    /// for (`LoadedPipeline::load`, `load_file`, `load_with_counter`): the loader adds them to
    /// their steps and checks them with every rule of declared tools and the budget contract.
    pub fn load_options(&self, opts: LoadOptions) -> LoadOptions {
        let listed = self
            .by_step
            .iter()
            .map(|(step, server, i)| ListedTools {
                step: step.clone(),
                server: server.clone(),
                tools: self.servers[*i].tools.clone(),
            })
            .collect();
        opts.listed_tools(listed)
    }

    /// Every tool each server listed, per agent step and server, in the servers' order (before
    /// a server's `tools: [ … ]` chooses among them).
    pub fn listed(&self) -> Vec<McpTool> {
        self.by_step
            .iter()
            .flat_map(|(step, server, i)| {
                self.servers[*i].tools.iter().map(|tool| McpTool {
                    step: step.clone(),
                    server: server.clone(),
                    tool: tool.clone(),
                })
            })
            .collect()
    }

    /// These tools, then `others` for every tool no server offers the step (the tools the
    /// pipeline declares in Rust).
    pub fn with_handlers<'a>(&'a self, others: &'a dyn ToolHandlersDyn) -> McpToolsWith<'a> {
        McpToolsWith { mcp: self, others }
    }

    /// Ends every session and stops the servers (dropping the connections kills them too).
    pub async fn close(self) {
        for server in self.servers {
            server.close().await;
        }
    }

    /// The server that answers `tool` for `step`.
    fn route(&self, step: &str, tool: &str) -> Option<&Server> {
        self.routes.get(&(step.to_owned(), tool.to_owned())).map(|&i| &self.servers[i])
    }

    async fn call_server(&self, server: &Server, request: &ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        // Arguments that are not a JSON object are the model's to fix: `args` says so, and the
        // step tells the model rather than failing.
        let arguments: Map<String, Value> =
            if request.arguments.trim().is_empty() { Map::new() } else { request.args()? };
        let (text, is_error) =
            server.call(request.name, arguments, self.options.call_timeout, self.options.max_result_bytes).await?;
        if is_error {
            tracing::warn!(target: "ctx::mcp", server = %server.name, tool = request.name, "the tool reported an error; the model is told");
            return Ok(ToolOutput::Text(format!("error: {text}")));
        }
        Ok(ToolOutput::Text(text))
    }
}

/// `def` with its servers where its `config.json` places them, when its model comes from one that
/// reads and places any; else `None`. A file that cannot be read, or names a server no step
/// has, changes nothing here: loading the pipeline reports it, at the file's key.
fn placed_by_config(def: &PipelineDef, options: &McpOptions) -> Option<PipelineDef> {
    let ModelSource::ConfigFile(path) = &def.model else { return None };
    let path = match &options.base_dir {
        Some(base) => base.join(path),
        None => std::path::PathBuf::from(path),
    };
    let file = ConfigFile::load(path).ok()?;
    if file.mcp_servers.is_empty() {
        return None;
    }
    let mut placed = def.clone();
    let _ = apply_config_mcp_servers(&mut placed, &file.mcp_servers);
    Some(placed)
}

impl ToolHandlers for McpTools {
    async fn call(&self, step_id: &str, request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        let Some(server) = self.route(step_id, request.name) else {
            return Err(McpError::NotConnected { step: step_id.to_owned(), tool: request.name.to_owned() }.into());
        };
        self.call_server(server, &request).await
    }
}

/// [`McpTools`] with the handlers of the tools no server offers ([`McpTools::with_handlers`]).
#[derive(Clone, Copy)]
pub struct McpToolsWith<'a> {
    mcp: &'a McpTools,
    others: &'a dyn ToolHandlersDyn,
}

impl std::fmt::Debug for McpToolsWith<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolsWith").field("mcp", self.mcp).finish_non_exhaustive()
    }
}

impl ToolHandlers for McpToolsWith<'_> {
    async fn call(&self, step_id: &str, request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        match self.mcp.route(step_id, request.name) {
            Some(server) => self.mcp.call_server(server, &request).await,
            None => self.others.call(step_id, request).await,
        }
    }
}
