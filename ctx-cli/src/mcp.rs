//! The MCP servers of a pipeline file's agent steps, for the commands that load it to run or
//! explain it: started before the pipeline is loaded (so their tools are listed, checked and
//! counted by the contract with the rest), offered to the agent steps while it runs, stopped
//! after.

use ctx::mcp::{McpOptions, McpTools};
use ctx::pipeline::yaml::LoadedFile;
use ctx::pipeline::{LoadOptions, StepKind};

/// The servers `file`'s agent steps name (where its `config.json`, if any, places them), started
/// and listed; `None` when no step names one.
pub(crate) async fn connect(file: &LoadedFile) -> Result<Option<McpTools>, String> {
    let def = file.definition();
    let names_one = def.steps.iter().any(|s| matches!(&s.kind, StepKind::Agent(a) if !a.mcp_servers.is_empty()));
    if !names_one {
        return Ok(None);
    }
    // Relative paths start where the pipeline file is, as when it is loaded.
    let dir = file.path().parent().map(std::path::Path::to_owned).unwrap_or_default();
    let tools = McpTools::connect(def, McpOptions::new().base_dir(dir)).await.map_err(|e| {
        use ctx::ErrorCode as _;
        format!("{e} [{}]", e.code())
    })?;
    let listed = tools.listed();
    for step in &def.steps {
        let StepKind::Agent(agent) = &step.kind else { continue };
        for server in &agent.mcp_servers {
            let names: Vec<&str> = listed
                .iter()
                .filter(|t| t.step == step.id && t.server == server.name)
                .map(|t| t.tool.name.as_str())
                .collect();
            let offered: Vec<&str> = names
                .iter()
                .copied()
                .filter(|n| server.tools.is_empty() || server.tools.iter().any(|t| t == n))
                .collect();
            eprintln!(
                "[mcp {} of {}: {} tools listed, offered: {}]",
                server.name,
                step.id,
                names.len(),
                offered.join(", ")
            );
        }
    }
    Ok(Some(tools))
}

/// `opts` with the tools the servers listed, when there are servers.
pub(crate) fn load_options(tools: Option<&McpTools>, opts: LoadOptions) -> LoadOptions {
    match tools {
        Some(tools) => tools.load_options(opts),
        None => opts,
    }
}

/// Stops the servers.
pub(crate) async fn close(tools: Option<McpTools>) {
    if let Some(tools) = tools {
        tools.close().await;
    }
}
