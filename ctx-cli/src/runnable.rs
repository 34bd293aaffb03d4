//! What `ctx run` cannot run. A pipeline is valid for every caller that gives each step its
//! backend; the command line gives models (offline or a server) and, with `--docs`, a search
//! index and store, but some steps need a backend only a Rust program can hand over. `ctx check`
//! says so as a warning at the step, and `ctx run` refuses such a file before any request with
//! the same words, instead of failing at the step after earlier requests were paid for.

use ctx::codes::Code;
use ctx::definition::{StepDef, StepKind};
use ctx::pipeline::yaml::{LoadedFile, YamlIssue};
use ctx::{ConfigIssue, FieldPath};

/// Why the command line cannot run `step`, with where in the step to point and the help; `None`
/// when it can. The one place that decides it: a step runs from the command line when the
/// command line has a source for what the step calls.
fn missing_backend(step: &StepDef) -> Option<(&'static str, String, String)> {
    match &step.kind {
        // The model's tool calls are answered by handlers: the command line has the tools of the
        // MCP servers a step names, and no source of the tools a Rust program declares.
        StepKind::Agent(agent) if agent.tools.is_empty() && !agent.mcp_servers.is_empty() => None,
        StepKind::Agent(_) => Some((
            "tools",
            format!(
                "step `{}` is an `agent` step whose tools are answered by a Rust program's tool handlers, \
                 and `ctx run` has no source of tools other than MCP servers, so this pipeline cannot run from the \
                 command line",
                step.id
            ),
            "take the step's tools from MCP servers (`mcp_servers`, see docs/mcp.md), or run it from Rust with \
             `StepEnv::builder().tools(&handlers)` (see docs/agents.md); the pipeline itself is valid"
                .to_owned(),
        )),
        StepKind::Custom(_) => Some((
            "action",
            format!(
                "step `{}` is a `custom` step: its code is a Rust program's `CustomSteps`, which `ctx run` \
                 does not have, so this pipeline cannot run from the command line",
                step.id
            ),
            "run it from Rust with `StepEnv::builder().custom(&steps)`; the pipeline itself is valid".to_owned(),
        )),
        _ => None,
    }
}

/// Every step of `file` that `ctx run` cannot run, each a located `PIPELINE_NEEDS_RUST_BACKEND`.
pub(crate) fn unrunnable_steps(file: &LoadedFile) -> Vec<YamlIssue> {
    file.definition()
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, step)| {
            let (key, message, help) = missing_backend(step)?;
            let path = FieldPath::root().key("steps").index(i).key(key);
            Some(file.locate(&ConfigIssue::new(Code::PipelineNeedsRustBackend, path, message).with_help(help)))
        })
        .collect()
}
