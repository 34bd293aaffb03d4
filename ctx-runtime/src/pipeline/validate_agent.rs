//! The rules of an `agent` step beyond those of `call_model`: its tools (names the model can
//! call, each once; a description; parameters that are a JSON-schema object) and its limits
//! (`max_tool_calls` within 1..=64, a positive `turn_budget_tokens`). The contract checks the
//! rest once the window is known: the tool schemas' exact cost, and a turn budget that leaves
//! the output its room.

use std::collections::HashSet;

use crate::validation::{ConfigIssue, FieldPath};

use super::definition::AgentSpec;
use super::steps::MAX_TOOL_CALLS_CAP;

/// The longest function name the chat format accepts.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Whether `name` is a function name the chat format accepts: 1 to 64 ASCII letters, digits,
/// `_` or `-`.
pub fn is_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Every problem of agent step `id` (at `path`) that is not a `call_model` rule.
pub(super) fn agent_issues(path: &FieldPath, id: &str, s: &AgentSpec, issues: &mut Vec<ConfigIssue>) {
    if s.tools.is_empty() {
        issues.push(
            ConfigIssue::new("AGENT_WITHOUT_TOOLS", path.key("tools"), format!("agent step `{id}` declares no tools"))
                .with_help(
                    "declare the tools the model may call, e.g. `tools: [ search_docs { description: \"Search the \
                     docs\", parameters: r#\"{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}}}\"# } \
                     ]`, or make it a call_model step",
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
                    "INVALID_TOOL_NAME",
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
                    "DUPLICATE_TOOL_NAME",
                    at.key("name"),
                    format!("agent step `{id}` declares tool `{name}` twice"),
                )
                .with_help("give each tool of a step its own name"),
            );
        }
        if tool.description.trim().is_empty() {
            issues.push(
                ConfigIssue::new(
                    "EMPTY_TOOL_DESCRIPTION",
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
                "INVALID_MAX_TOOL_CALLS",
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
                "INVALID_TURN_BUDGET",
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

/// `None` when `parameters` is a JSON-schema object (`"type": "object"`); else the issue.
fn parameters_issue(at: &FieldPath, id: &str, name: &str, parameters: &str) -> Option<ConfigIssue> {
    const EXAMPLE: &str = r##"r#"{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}"#"##;
    let at = at.key("parameters");
    match serde_json::from_str::<serde_json::Value>(parameters) {
        Err(e) => Some(
            ConfigIssue::new(
                "INVALID_TOOL_PARAMETERS",
                at,
                format!("the parameters of tool `{name}` of agent step `{id}` are not JSON: {e}"),
            )
            .with_help(format!("write the JSON schema of the arguments as a raw string, e.g. {EXAMPLE}")),
        ),
        Ok(v) if v.get("type").and_then(serde_json::Value::as_str) != Some("object") => Some(
            ConfigIssue::new(
                "TOOL_PARAMETERS_NOT_OBJECT",
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
        Ok(_) => None,
    }
}
