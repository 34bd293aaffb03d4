//! The tools MCP servers listed, added to the agent steps that name the servers when a pipeline
//! is loaded, so that every rule of declared tools (names, descriptions, object schemas, each
//! name once) and the budget contract (the tool-schema term, counted with the model's tool rule)
//! runs on them too. What those rules find is then said of the server and its tool, at the
//! server's declaration (`steps[i].mcp_servers[k]`): a server whose schemas no longer fit is a
//! load error naming it, not a 400 from the model's server.
//!
//! The listing itself comes from the `mcp` feature (`McpTools`); this part needs no MCP client,
//! so a pipeline naming MCP servers that is loaded without their listing fails to load
//! (`MCP_SERVER_NOT_CONNECTED`) in every build, instead of running an agent without its tools.

use crate::codes::Code;
use crate::tokens::TokenCounter;
use crate::validation::{ConfigIssue, FieldPath, PathSegment};

use super::definition::{PipelineDef, StepKind, ToolSpec};

/// The tools one MCP server of one agent step lists, in the server's order.
#[derive(Debug, Clone, PartialEq, Eq)]
// Built only by the `mcp` feature's `McpTools` (and the tests): without it every load has an
// empty listing, and a step naming a server fails to load.
#[cfg_attr(not(any(test, feature = "mcp")), allow(dead_code))]
pub(crate) struct ListedTools {
    /// The agent step's id.
    pub(crate) step: String,
    /// The server's name in that step.
    pub(crate) server: String,
    /// Every tool the server lists, as declared tools are written.
    pub(crate) tools: Vec<ToolSpec>,
}

/// Which tools of each step came from which server, to say so in issues.
#[derive(Debug, Default)]
pub(crate) struct Added {
    steps: Vec<StepAdded>,
}

/// The tools added to one agent step.
#[derive(Debug)]
struct StepAdded {
    /// The step's index.
    step: usize,
    /// How many tools the step declares itself (the added ones follow).
    declared: usize,
    /// Per added tool, the index of its server in the step's `mcp_servers` and its name.
    origins: Vec<(usize, String)>,
}

/// Adds to each agent step of `def` the tools of the servers it names, as `listed` has them
/// (only those in a server's `tools: [ … ]` when it has one), after the tools it declares. A
/// server with no listing, or an allowed tool the server does not list, is an issue.
pub(crate) fn add_listed(def: &mut PipelineDef, listed: &[ListedTools], issues: &mut Vec<ConfigIssue>) -> Added {
    let mut added = Added::default();
    for (i, step) in def.steps.iter_mut().enumerate() {
        let StepKind::Agent(spec) = &mut step.kind else { continue };
        if spec.mcp_servers.is_empty() {
            continue;
        }
        let declared = spec.tools.len();
        let mut origins = Vec::new();
        let at = FieldPath::root().key("steps").index(i).key("mcp_servers");
        for (k, server) in spec.mcp_servers.iter().enumerate() {
            let Some(found) = listed.iter().find(|l| l.step == step.id && l.server == server.name) else {
                issues.push(
                    ConfigIssue::new(
                        Code::McpServerNotConnected,
                        at.index(k),
                        format!(
                            "agent step `{}` takes tools from MCP server `{}`, whose tools were not listed for this load",
                            step.id, server.name
                        ),
                    )
                    .with_help(
                        "load the pipeline through `McpTools` (feature `mcp`), which starts the servers and lists \
                         their tools, or run it with `ctx run`",
                    ),
                );
                continue;
            };
            for (t, name) in server.tools.iter().enumerate() {
                if !found.tools.iter().any(|tool| &tool.name == name) {
                    let names: Vec<&str> = found.tools.iter().map(|tool| tool.name.as_str()).collect();
                    let help = match crate::validation::did_you_mean(name, names.iter().copied()) {
                        Some(close) => format!("did you mean `{close}`? The server lists {}", names.join(", ")),
                        None => format!("the server lists {}", names.join(", ")),
                    };
                    issues.push(
                        ConfigIssue::new(
                            Code::McpToolRejected,
                            at.index(k).key("tools").index(t),
                            format!("MCP server `{}` of agent step `{}` lists no tool `{name}`", server.name, step.id),
                        )
                        .with_help(help),
                    );
                }
            }
            for tool in &found.tools {
                if server.tools.is_empty() || server.tools.contains(&tool.name) {
                    spec.tools.push(tool.clone());
                    origins.push((k, server.name.clone()));
                }
            }
        }
        added.steps.push(StepAdded { step: i, declared, origins });
    }
    added
}

impl Added {
    /// `issues` with each one about an added tool said of its server and tool, at the server's
    /// declaration, and each contract issue of a step with added tools said of those servers,
    /// naming their largest tools as `counter` (when known) counts them with the tool rule.
    pub(crate) fn rewrite(
        &self,
        def: &PipelineDef,
        issues: Vec<ConfigIssue>,
        counter: Option<&TokenCounter>,
    ) -> Vec<ConfigIssue> {
        issues.into_iter().map(|issue| self.rewrite_one(def, issue, counter)).collect()
    }

    fn rewrite_one(&self, def: &PipelineDef, issue: ConfigIssue, counter: Option<&TokenCounter>) -> ConfigIssue {
        let segments = issue.path.0.clone();
        let Some(PathSegment::Index(i)) = segments.get(1) else { return issue };
        if segments.first() != Some(&PathSegment::Key("steps".into())) {
            return issue;
        }
        let Some(StepAdded { declared, origins, .. }) = self.steps.iter().find(|s| s.step == *i) else {
            return issue;
        };
        let (step, at) = (&def.steps[*i], FieldPath::root().key("steps").index(*i).key("mcp_servers"));
        let StepKind::Agent(spec) = &step.kind else { return issue };
        match (segments.get(2), segments.get(3)) {
            (Some(PathSegment::Key(key)), Some(PathSegment::Index(j))) if key == "tools" && *j >= *declared => {
                let (Some((k, server)), Some(tool)) = (origins.get(j - declared), spec.tools.get(*j)) else {
                    return issue;
                };
                let tool = &tool.name;
                ConfigIssue::new(
                    Code::McpToolRejected,
                    at.index(*k),
                    format!("tool `{tool}` of MCP server `{server}` cannot be offered: {}", issue.message),
                )
                .with_help(format!(
                    "{}; or leave the tool out, listing the ones to offer in the server's block: `tools: [ … ]`",
                    issue.help.as_deref().unwrap_or("fix the server's tool")
                ))
            }
            _ if !origins.is_empty() && is_contract_issue(&issue) => {
                let mut servers: Vec<(usize, &str)> = origins.iter().map(|(k, s)| (*k, s.as_str())).collect();
                servers.dedup();
                let names: Vec<String> = servers.iter().map(|(_, s)| format!("`{s}`")).collect();
                let largest = largest_tools(spec, *declared, counter);
                let path = if servers.len() == 1 { at.index(servers[0].0) } else { at };
                ConfigIssue::new(
                    Code::McpToolsDoNotFit,
                    path,
                    format!(
                        "the {} tool schemas MCP server{} {} list{} no longer fit agent step `{}`{largest}: {}",
                        origins.len(),
                        if servers.len() == 1 { "" } else { "s" },
                        names.join(", "),
                        if servers.len() == 1 { "s" } else { "" },
                        step.id,
                        issue.message
                    ),
                )
                .with_help(
                    "offer fewer of the servers' tools (`tools: [ … ]` in a server's block), or give the step a model \
                     with a larger window",
                )
            }
            _ => issue,
        }
    }
}

/// Whether `issue` is the budget contract's verdict on a step (the request, or the turn budget).
fn is_contract_issue(issue: &ConfigIssue) -> bool {
    matches!(issue.code, Code::BudgetContractViolated | Code::TurnBudgetExceedsRoom)
}

/// " (largest: `a` 812 tokens, `b` 640 tokens)": the added tools that cost most, each counted
/// alone with the tool rule; empty without a counter.
fn largest_tools(spec: &super::definition::AgentSpec, declared: usize, counter: Option<&TokenCounter>) -> String {
    let Some(counter) = counter else { return String::new() };
    let mut costs: Vec<(usize, &str)> = spec.tools[declared..]
        .iter()
        .filter_map(|t| {
            let schema = t.schema().ok()?;
            Some((counter.format().count_tools(counter, &[schema]).ok()?, t.name.as_str()))
        })
        .collect();
    costs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let shown: Vec<String> = costs.iter().take(3).map(|(n, name)| format!("`{name}` {n} tokens")).collect();
    if shown.is_empty() { String::new() } else { format!(" (largest: {})", shown.join(", ")) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::definition::McpServerSpec;
    use crate::pipeline::{LoadOptions, LoadedPipeline};
    use ctx_spec::pipeline::testing;

    fn mcp_def(allow: &[&str]) -> PipelineDef {
        let mut def = testing::def(vec![testing::agent("answer", "end")]);
        let StepKind::Agent(spec) = &mut def.steps[0].kind else { unreachable!() };
        spec.tools.clear();
        let server = McpServerSpec::new("files").command(Some("node".into()));
        spec.mcp_servers.push(server.tools(allow.iter().map(|s| (*s).to_owned()).collect()));
        def
    }

    fn tool(name: &str, description: &str) -> ToolSpec {
        ToolSpec::new(
            name,
            description,
            r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}"#,
        )
    }

    fn listed(tools: Vec<ToolSpec>) -> Vec<ListedTools> {
        vec![ListedTools { step: "answer".into(), server: "files".into(), tools }]
    }

    fn codes(err: crate::error::CtxError) -> Vec<(String, String, String)> {
        let crate::error::CtxError::Config(c) = err else { panic!("{err}") };
        c.issues.iter().map(|i| (i.code.to_string(), i.path.to_string(), i.message.clone())).collect()
    }

    #[test]
    fn a_pipeline_naming_a_server_does_not_load_without_its_listing() {
        let got = codes(LoadedPipeline::load(mcp_def(&[]), LoadOptions::new()).unwrap_err());
        assert_eq!(got[0].0, "MCP_SERVER_NOT_CONNECTED");
        assert_eq!(got[0].1, "steps[0].mcp_servers[0]");
        assert!(got[0].2.contains("`files`"), "{}", got[0].2);
    }

    #[test]
    fn listed_tools_are_offered_and_checked_like_declared_ones() {
        let opts = LoadOptions::new().listed_tools(listed(vec![tool("read_file", "Reads a file"), tool("write", "W")]));
        let p = LoadedPipeline::load(mcp_def(&["read_file"]), opts).unwrap();
        let StepKind::Agent(spec) = &p.definition().steps[0].kind else { unreachable!() };
        assert_eq!(spec.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["read_file"]);
        assert!(p.contract_report().step("answer").unwrap().tool_schema_tokens > 0);

        // An allowed tool the server does not list, and a tool that breaks a rule.
        let opts = LoadOptions::new().listed_tools(listed(vec![tool("read_file", ""), tool("write", "W")]));
        let got = codes(LoadedPipeline::load(mcp_def(&["read_fil", "read_file"]), opts).unwrap_err());
        assert_eq!(got.len(), 2, "{got:?}");
        let at = |path: &str| got.iter().find(|(_, p, _)| p == path).unwrap_or_else(|| panic!("{path}: {got:?}"));
        assert_eq!(at("steps[0].mcp_servers[0].tools[0]").0, "MCP_TOOL_REJECTED");
        assert!(at("steps[0].mcp_servers[0].tools[0]").2.contains("lists no tool `read_fil`"));
        let rejected = at("steps[0].mcp_servers[0]");
        assert_eq!(rejected.0, "MCP_TOOL_REJECTED");
        assert!(rejected.2.contains("tool `read_file` of MCP server `files`"), "{}", rejected.2);
    }

    #[test]
    fn a_config_file_places_the_servers_before_they_are_listed_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let config = |servers: &str| {
            let json = format!(
                r#"{{"model_context_window": 16384, "encoding": "cl100k_base", "mcp_servers": {{{servers}}}}}"#
            );
            std::fs::write(dir.path().join("config.json"), json).unwrap();
        };
        let mut def = mcp_def(&[]);
        def.model = crate::pipeline::ModelSource::ConfigFile("config.json".into());
        let opts = || LoadOptions::new().base_dir(dir.path()).listed_tools(listed(vec![tool("read_file", "R")]));
        config(r#""files": {"command": "node2", "args": ["fs.js"]}, "other": {"url": "http://127.0.0.1:9/mcp"}"#);
        let got = codes(LoadedPipeline::load(def.clone(), opts()).unwrap_err());
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].0.as_str(), got[0].1.as_str()), ("UNKNOWN_CONFIG_KEY", "mcp_servers.other"));
        config(r#""files": {"command": "node2", "args": ["fs.js"]}"#);
        let p = LoadedPipeline::load(def, opts()).unwrap();
        let StepKind::Agent(spec) = &p.definition().steps[0].kind else { unreachable!() };
        assert_eq!(spec.mcp_servers[0].command.as_deref(), Some("node2"));
        assert_eq!(spec.mcp_servers[0].args, ["fs.js"]);
    }

    #[test]
    fn schemas_that_no_longer_fit_name_the_server_and_its_largest_tool() {
        let big = tool("huge", &"Reads the docs. ".repeat(1_500));
        let opts = LoadOptions::new().listed_tools(listed(vec![tool("small", "S"), big]));
        let got = codes(LoadedPipeline::load(mcp_def(&[]), opts).unwrap_err());
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].0.as_str(), got[0].1.as_str()), ("MCP_TOOLS_DO_NOT_FIT", "steps[0].mcp_servers[0]"));
        assert!(got[0].2.contains("MCP server `files`"), "{}", got[0].2);
        assert!(got[0].2.contains("(largest: `huge` "), "{}", got[0].2);
    }
}
