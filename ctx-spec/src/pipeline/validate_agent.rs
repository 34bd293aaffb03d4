//! The rules of an `agent` step beyond those of `call_model`: its tools (names the model can
//! call, each once; a description; parameters that are a JSON-schema object) and its limits
//! (`max_tool_calls` within 1..=64, a positive `turn_budget_tokens`). The contract checks the
//! rest once the window is known: the tool schemas' exact cost, and a turn budget that leaves
//! the output its room.

use std::collections::HashSet;

use crate::codes::Code;
use crate::validation::{ConfigIssue, FieldPath};

use super::definition::{AgentSpec, McpServerSpec};
use super::validate_params::{MAX_TOOL_NAME_LEN, SchemaProblem, is_tool_name, object_schema};

/// The most `max_tool_calls` an agent step may declare.
pub const MAX_TOOL_CALLS_CAP: i64 = 64;

/// Every problem of agent step `id` (at `path`) that is not a `call_model` rule.
pub(super) fn agent_issues(path: &FieldPath, id: &str, s: &AgentSpec, issues: &mut Vec<ConfigIssue>) {
    mcp_server_issues(path, id, s, issues);
    if s.tools.is_empty() && s.mcp_servers.is_empty() {
        issues.push(
            ConfigIssue::new(Code::AgentWithoutTools, path.key("tools"), format!("agent step `{id}` declares no tools"))
                .with_help(
                    "declare the tools the model may call, e.g. `tools: [ search_docs { description: \"Search the \
                     docs\", parameters: r#\"{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}}}\"# } \
                     ]`, or MCP servers to take tools from (`mcp_servers: [ files { command: \"…\" } ]`), or \
                     make it a call_model step",
                ),
        );
    }
    let mut seen = HashSet::new();
    for (j, tool) in s.tools.iter().enumerate() {
        let at = path.key("tools").index(j);
        let name = tool.name.as_str();
        if !is_tool_name(name) {
            issues.push(
                ConfigIssue::new(
                    Code::InvalidToolName,
                    at.key("name"),
                    format!("tool {j} of agent step `{id}` is named `{name}`, which the model cannot call"),
                )
                .with_help(format!(
                    "name tools with 1 to {MAX_TOOL_NAME_LEN} ASCII letters, digits, `_` or `-`, e.g. `search_docs`"
                )),
            );
        } else if !seen.insert(name) {
            issues.push(
                ConfigIssue::new(
                    Code::DuplicateToolName,
                    at.key("name"),
                    format!("agent step `{id}` declares tool `{name}` twice"),
                )
                .with_help("give each tool of a step its own name"),
            );
        }
        if tool.description.trim().is_empty() {
            issues.push(
                ConfigIssue::new(
                    Code::EmptyToolDescription,
                    at.key("description"),
                    format!("tool `{name}` of agent step `{id}` has no description"),
                )
                .with_help("say what the tool does and when to call it: the model chooses tools by their description"),
            );
        }
        if let Some(issue) = parameters_issue(&at, id, name, &tool.parameters) {
            issues.push(issue);
        }
    }
    if !(1..=MAX_TOOL_CALLS_CAP).contains(&s.max_tool_calls) {
        issues.push(
            ConfigIssue::new(
                Code::InvalidMaxToolCalls,
                path.key("max_tool_calls"),
                format!(
                    "`max_tool_calls` of agent step `{id}` is {}; it must be between 1 and {MAX_TOOL_CALLS_CAP}",
                    s.max_tool_calls
                ),
            )
            .with_help("set how many tool calls one turn may run, e.g. `max_tool_calls: 4`"),
        );
    }
    if let Some(t) = s.turn_budget_tokens.filter(|&t| t <= 0) {
        issues.push(
            ConfigIssue::new(
                Code::InvalidTurnBudget,
                path.key("turn_budget_tokens"),
                format!("`turn_budget_tokens` of agent step `{id}` is {t}; it must be a positive number of tokens"),
            )
            .with_help(
                "set the tokens the conversation plus the turn's tool calls and results may hold, or remove it to \
                 use what the window leaves after the output, the tools and the margin",
            ),
        );
    }
}

/// The rules of the step's `mcp_servers`: each named as a tool is (1 to 64 ASCII letters,
/// digits, `_` or `-`) and once, each with exactly one transport.
fn mcp_server_issues(path: &FieldPath, id: &str, s: &AgentSpec, issues: &mut Vec<ConfigIssue>) {
    let mut seen = HashSet::new();
    for (j, server) in s.mcp_servers.iter().enumerate() {
        let at = path.key("mcp_servers").index(j);
        let name = server.name.as_str();
        if !is_tool_name(name) {
            issues.push(
                ConfigIssue::new(
                    Code::AgentMcpServerName,
                    at.key("name"),
                    format!("MCP server {j} of agent step `{id}` is named `{name}`"),
                )
                .with_help(format!(
                    "name servers with 1 to {MAX_TOOL_NAME_LEN} ASCII letters, digits, `_` or `-`, e.g. `files`"
                )),
            );
        } else if !seen.insert(name) {
            issues.push(
                ConfigIssue::new(
                    Code::AgentMcpServerName,
                    at.key("name"),
                    format!("agent step `{id}` declares MCP server `{name}` twice"),
                )
                .with_help(
                    "give each MCP server of a step its own name, and list all the tools it offers in one block",
                ),
            );
        }
        let command = server.command.as_deref().filter(|c| !c.trim().is_empty());
        let url = server.url.as_deref();
        let problem = match (command, url) {
            (None, None) => Some((at.clone(), "has neither `command` nor `url`".to_owned())),
            (Some(_), Some(_)) => Some((at.key("url"), "has both `command` and `url`".to_owned())),
            (None, Some(u)) if u.starts_with("https://") => Some((
                at.key("url"),
                format!(
                    "has the URL `{u}`: ctx's MCP client speaks plain HTTP only (it carries no TLS, whose \
                     provider in reqwest would make every other reqwest client of the process panic)"
                ),
            )),
            (None, Some(u)) if !u.starts_with("http://") => {
                Some((at.key("url"), format!("has the URL `{u}`, which is not `http://…`")))
            }
            (None, Some(_)) if !server.args.is_empty() => {
                Some((at.key("args"), "has `args` without a `command`".to_owned()))
            }
            _ => bearer_token_problem(server).map(|what| (at.key("bearer_token_env"), what)),
        };
        if let Some((at, what)) = problem {
            let help = if url.is_some_and(|u| u.starts_with("https://")) && command.is_none() {
                "run the server over stdio (`command: \"…\", args: [ … ]`), or reach it through a \
                 TLS-terminating proxy listening on 127.0.0.1 and write the proxy's `http://127.0.0.1:…` URL"
            } else if at.to_string().ends_with("bearer_token_env") {
                "name the environment variable that holds the server's token (`bearer_token_env: MCP_TOKEN`), \
                 on a server reached by `url`"
            } else {
                "give the server one transport: `command: \"node\", args: [\"server.js\"]` (spawned, spoken to over \
                 its standard input and output) or `url: \"http://127.0.0.1:3001/mcp\"` (Streamable HTTP)"
            };
            issues.push(
                ConfigIssue::new(
                    Code::AgentMcpServerTransport,
                    at,
                    format!("MCP server `{name}` of agent step `{id}` {what}"),
                )
                .with_help(help),
            );
        }
    }
}

/// What is wrong with a server's `bearer_token_env`: it goes with a `url` (a spawned command is
/// given its secrets by its own environment), and it is the name of an environment variable
/// (ASCII letters, digits and `_`, not starting with a digit), never the token itself.
fn bearer_token_problem(server: &McpServerSpec) -> Option<String> {
    let name = server.bearer_token_env.as_deref()?;
    if server.url.is_none() {
        return Some("has `bearer_token_env` without a `url`".to_owned());
    }
    let is_variable = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (!is_variable).then(|| {
        format!(
            "has `bearer_token_env: {:?}`, which is not the name of an environment variable (the token \
             belongs in the variable, never in the pipeline)",
            truncated(name)
        )
    })
}

/// The start of what may be a secret written where a name belongs, for a message.
fn truncated(text: &str) -> String {
    match text.char_indices().nth(4) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// `None` when `parameters` is a JSON-schema object (`"type": "object"`); else the issue.
fn parameters_issue(at: &FieldPath, id: &str, name: &str, parameters: &str) -> Option<ConfigIssue> {
    const EXAMPLE: &str = r##"r#"{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}"#"##;
    let at = at.key("parameters");
    match object_schema(parameters) {
        Err(SchemaProblem::InvalidJson(e)) => Some(
            ConfigIssue::new(
                Code::InvalidToolParameters,
                at,
                format!("the parameters of tool `{name}` of agent step `{id}` are not JSON: {e}"),
            )
            .with_help(format!("write the JSON schema of the arguments as a raw string, e.g. {EXAMPLE}")),
        ),
        Err(SchemaProblem::TypeNotObject(_) | SchemaProblem::NoMapping) => Some(
            ConfigIssue::new(
                Code::ToolParametersNotObject,
                at,
                format!(
                    "the parameters of tool `{name}` of agent step `{id}` are not an object schema: the chat format \
                     takes the arguments as one JSON object"
                ),
            )
            .with_help(format!(
                "give the schema `\"type\": \"object\"` and the arguments as `properties`, e.g. {EXAMPLE}"
            )),
        ),
        Ok(()) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::definition::{PipelineDef, StepKind, ToolSpec};
    use crate::pipeline::testing::{self, codes};
    use crate::pipeline::{ValidateOptions, validate_definition};

    fn agent_def(edit: impl FnOnce(&mut AgentSpec)) -> PipelineDef {
        let mut def = testing::def(vec![testing::agent("answer", "end")]);
        let StepKind::Agent(spec) = &mut def.steps[0].kind else { unreachable!() };
        edit(spec);
        def
    }

    fn tool(name: &str, description: &str, parameters: &str) -> ToolSpec {
        ToolSpec { name: name.into(), description: description.into(), parameters: parameters.into() }
    }

    /// Every issue with the contract checked (the default at compile time for literal pipelines).
    fn check(def: &PipelineDef) -> Vec<(&'static str, String)> {
        codes(&validate_definition(def, &ValidateOptions::default()))
    }

    #[test]
    fn the_fixture_is_valid_and_loads() {
        assert_eq!(check(&agent_def(|_| {})), vec![]);
    }

    #[test]
    fn tool_names_must_be_callable_and_unique() {
        let def = agent_def(|s| {
            s.tools.push(tool("search docs", "d", testing::SEARCH_PARAMETERS));
            s.tools.push(tool("search_docs", "d", testing::SEARCH_PARAMETERS));
            s.tools.push(tool(&"x".repeat(65), "d", testing::SEARCH_PARAMETERS));
            s.tools.push(tool("", "d", testing::SEARCH_PARAMETERS));
        });
        let issues = validate_definition(&def, &ValidateOptions::default());
        assert_eq!(
            codes(&issues),
            vec![
                ("INVALID_TOOL_NAME", "steps[0].tools[1].name".into()),
                ("DUPLICATE_TOOL_NAME", "steps[0].tools[2].name".into()),
                ("INVALID_TOOL_NAME", "steps[0].tools[3].name".into()),
                ("INVALID_TOOL_NAME", "steps[0].tools[4].name".into()),
            ]
        );
        assert!(issues[0].message.contains("`search docs`"), "{}", issues[0].message);
        assert!(issues[0].help.as_deref().unwrap().contains("search_docs"));
        assert!(is_tool_name("a-b_9") && is_tool_name(&"x".repeat(64)) && !is_tool_name("é"));
    }

    #[test]
    fn descriptions_and_parameters() {
        let def = agent_def(|s| {
            s.tools[0].description = "  ".into();
            s.tools.push(tool("broken", "d", "{not json"));
            s.tools.push(tool("array", "d", r#"{"type":"array"}"#));
            s.tools.push(tool("untyped", "d", r#"{"properties":{}}"#));
        });
        let issues = validate_definition(&def, &ValidateOptions::default());
        assert_eq!(
            codes(&issues),
            vec![
                ("EMPTY_TOOL_DESCRIPTION", "steps[0].tools[0].description".into()),
                ("INVALID_TOOL_PARAMETERS", "steps[0].tools[1].parameters".into()),
                ("TOOL_PARAMETERS_NOT_OBJECT", "steps[0].tools[2].parameters".into()),
                ("TOOL_PARAMETERS_NOT_OBJECT", "steps[0].tools[3].parameters".into()),
            ]
        );
        assert!(issues[1].message.contains("not JSON"), "{}", issues[1].message);
        assert!(issues[2].help.as_deref().unwrap().contains(r#""type":"object""#));
    }

    #[test]
    fn limits_and_the_tool_list() {
        for (calls, ok) in [(0, false), (-1, false), (1, true), (64, true), (65, false)] {
            let def = agent_def(|s| s.max_tool_calls = calls);
            let got = check(&def);
            assert_eq!(got.is_empty(), ok, "max_tool_calls {calls}: {got:?}");
            if !ok {
                assert_eq!(got, vec![("INVALID_MAX_TOOL_CALLS", "steps[0].max_tool_calls".into())]);
            }
        }
        let def = agent_def(|s| {
            s.tools.clear();
            s.turn_budget_tokens = Some(0);
        });
        assert_eq!(
            check(&def),
            vec![
                ("AGENT_WITHOUT_TOOLS", "steps[0].tools".into()),
                ("INVALID_TURN_BUDGET", "steps[0].turn_budget_tokens".into()),
            ]
        );
    }

    #[test]
    fn mcp_servers_are_a_tool_source_named_once_with_one_transport() {
        use crate::pipeline::definition::McpServerSpec;
        let server = |name: &str| McpServerSpec::new(name).command(Some("node".into())).args(vec!["s.js".into()]);
        // Tools from a server alone make an agent step.
        let def = agent_def(|s| {
            s.tools.clear();
            s.mcp_servers.push(server("files"));
        });
        assert_eq!(check(&def), vec![]);
        let def = agent_def(|s| {
            s.mcp_servers = vec![
                server("files"),
                server("files"),
                server("a b"),
                McpServerSpec::new("none"),
                server("both").url(Some("http://127.0.0.1:3001/mcp".into())),
                McpServerSpec::new("ftp").url(Some("ftp://host".into())),
                McpServerSpec::new("http").url(Some("http://h/mcp".into())).args(vec!["x".into()]),
                McpServerSpec::new("web").url(Some("http://127.0.0.1:3001/mcp".into())),
                McpServerSpec::new("tls").url(Some("https://mcp.example.com/mcp".into())),
            ];
        });
        let issues = validate_definition(&def, &ValidateOptions::default());
        assert_eq!(
            codes(&issues),
            vec![
                ("AGENT_MCP_SERVER_NAME", "steps[0].mcp_servers[1].name".into()),
                ("AGENT_MCP_SERVER_NAME", "steps[0].mcp_servers[2].name".into()),
                ("AGENT_MCP_SERVER_TRANSPORT", "steps[0].mcp_servers[3]".into()),
                ("AGENT_MCP_SERVER_TRANSPORT", "steps[0].mcp_servers[4].url".into()),
                ("AGENT_MCP_SERVER_TRANSPORT", "steps[0].mcp_servers[5].url".into()),
                ("AGENT_MCP_SERVER_TRANSPORT", "steps[0].mcp_servers[6].args".into()),
                ("AGENT_MCP_SERVER_TRANSPORT", "steps[0].mcp_servers[8].url".into()),
            ]
        );
        let issue = |path: &str| issues.iter().find(|i| i.path.to_string() == path).unwrap();
        assert!(issue("steps[0].mcp_servers[1].name").message.contains("`files` twice"));
        assert!(issue("steps[0].mcp_servers[3]").message.contains("neither `command` nor `url`"));
        // An `https://` URL is refused where it is written, saying why and what to write instead.
        let tls = issue("steps[0].mcp_servers[8].url");
        assert!(tls.message.contains("plain HTTP only"), "{}", tls.message);
        let help = tls.help.as_deref().unwrap();
        assert!(help.contains("stdio") && help.contains("TLS-terminating proxy"), "{help}");
    }

    #[test]
    fn a_bearer_token_is_named_by_its_variable_on_a_url_server() {
        use crate::pipeline::definition::McpServerSpec;
        let web = |name: &str| McpServerSpec::new(name).url(Some("http://127.0.0.1:3001/mcp".into()));
        let def = agent_def(|s| {
            s.mcp_servers = vec![
                web("ok").bearer_token_env(Some("MCP_TOKEN".into())),
                McpServerSpec::new("spawned").command(Some("node".into())).bearer_token_env(Some("T".into())),
                web("secret").bearer_token_env(Some("sk-live-abcdef".into())),
                web("digit").bearer_token_env(Some("1TOKEN".into())),
            ];
        });
        let issues = validate_definition(&def, &ValidateOptions::default());
        assert_eq!(
            codes(&issues),
            vec![
                ("AGENT_MCP_SERVER_TRANSPORT", "steps[0].mcp_servers[1].bearer_token_env".into()),
                ("AGENT_MCP_SERVER_TRANSPORT", "steps[0].mcp_servers[2].bearer_token_env".into()),
                ("AGENT_MCP_SERVER_TRANSPORT", "steps[0].mcp_servers[3].bearer_token_env".into()),
            ]
        );
        assert!(issues[0].message.contains("without a `url`"), "{}", issues[0].message);
        // What may be a token written in the variable's place is not repeated whole.
        assert!(issues[1].message.contains("\"sk-l…\""), "{}", issues[1].message);
        assert!(!issues[1].message.contains("abcdef"));
        assert!(issues[1].help.as_deref().unwrap().contains("bearer_token_env: MCP_TOKEN"));
    }

    #[test]
    fn a_turn_budget_must_leave_the_output_its_room() {
        // 16,384 − 600 output − 128 margin − tools − priming is the most the turn may hold.
        let def = agent_def(|s| s.turn_budget_tokens = Some(16_000));
        let issues = validate_definition(&def, &ValidateOptions::default());
        assert_eq!(codes(&issues), vec![("TURN_BUDGET_EXCEEDS_ROOM", "steps[0].turn_budget_tokens".into())]);
        let help = issues[0].help.as_deref().unwrap();
        let room: usize = help.split("at most ").nth(1).and_then(|r| r.split(',').next()).unwrap().parse().unwrap();
        assert!(room < 16_384 - 600 - 128, "{help}");
        assert_eq!(check(&agent_def(|s| s.turn_budget_tokens = Some(room as i64))), vec![]);
        assert_eq!(check(&agent_def(|s| s.turn_budget_tokens = Some(room as i64 + 1))).len(), 1);
    }

    #[test]
    fn the_tool_schemas_are_a_term_of_the_contract() {
        // 9,000 context + 2,000 history + 600 output + 128 margin fit the 16,384 window; a tool
        // description of about 5,000 tokens does not.
        let def = agent_def(|s| s.tools[0].description = "Search the docs. ".repeat(1_250));
        let issues = validate_definition(&def, &ValidateOptions::default());
        assert_eq!(codes(&issues), vec![("BUDGET_CONTRACT_VIOLATED", "steps[0]".into())]);
        assert!(issues[0].message.contains(" + tool schemas "), "{}", issues[0].message);
    }

    #[test]
    fn the_call_model_rules_apply_to_the_agent() {
        let def = agent_def(|s| {
            s.call.prompt_key = "nope".into();
            s.call.max_output_tokens = Some(0);
        });
        let got = check(&def);
        assert!(got.contains(&("UNKNOWN_PROMPT", "steps[0].prompt_key".into())), "{got:?}");
        assert!(got.iter().any(|(_, path)| path == "steps[0].max_output_tokens"), "{got:?}");
    }
}
