//! The MCP servers of a pipeline file's agent steps, for the commands that load it to run or
//! explain it: started before the pipeline is loaded (so their tools are listed, checked and
//! counted by the contract with the rest), offered to the agent steps while it runs, stopped
//! after (`ctx explain` stops them once they have listed their tools).

use ctx::definition::{PipelineDef, StepKind};
use ctx::mcp::{McpOptions, McpTools};
use ctx::pipeline::LoadOptions;
use ctx::pipeline::yaml::LoadedFile;

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
    for (step, server, listed, offered) in offers(def, &tools) {
        eprintln!("[mcp {server} of {step}: {listed} tools listed, offered: {}]", offered.join(", "));
    }
    Ok(Some(tools))
}

/// Per agent step and server: how many tools the server listed, and those the step offers
/// (its `tools: [ … ]` of them, else all), in the server's order.
fn offers(def: &PipelineDef, tools: &McpTools) -> Vec<(String, String, usize, Vec<String>)> {
    let listed = tools.listed();
    let mut out = Vec::new();
    for step in &def.steps {
        let StepKind::Agent(agent) = &step.kind else { continue };
        for server in &agent.mcp_servers {
            let names: Vec<&str> = listed
                .iter()
                .filter(|t| t.step == step.id && t.server == server.name)
                .map(|t| t.tool.name.as_str())
                .collect();
            let offered = names
                .iter()
                .filter(|n| server.tools.is_empty() || server.tools.iter().any(|t| t == *n))
                .map(|n| (*n).to_owned())
                .collect();
            out.push((step.id.clone(), server.name.clone(), names.len(), offered));
        }
    }
    out
}

/// For `ctx explain`: `opts` with the tools the servers of `file`'s agent steps list now (the
/// servers started, listed and stopped again: explaining calls no tool), and a line per step and
/// server naming the tools counted in the step's tool-schema term. A server that cannot be
/// reached is the error: without its tools the contract is not the one a run has.
pub(crate) fn listed_for_explain(file: &LoadedFile, opts: LoadOptions) -> Result<(LoadOptions, Vec<String>), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let tools = runtime.block_on(connect(file)).map_err(|e| {
        format!(
            "{e}\n`ctx explain` starts a pipeline's MCP servers to list their tools: their tool schemas are \
             part of the contract"
        )
    })?;
    let Some(tools) = tools else { return Ok((opts, Vec::new())) };
    let lines = offers(file.definition(), &tools)
        .into_iter()
        .map(|(step, server, _, offered)| {
            let n = offered.len();
            let plural = if n == 1 { "" } else { "s" };
            format!(
                "agent step `{step}` offers {n} tool{plural} of MCP server `{server}`, listed now and counted in \
                 its tool schemas: {}",
                offered.join(", ")
            )
        })
        .collect();
    let opts = tools.load_options(opts);
    runtime.block_on(tools.close());
    Ok((opts, lines))
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
