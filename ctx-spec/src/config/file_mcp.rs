//! `mcp_servers` of a `config.json`: where the deployment's MCP servers are, by the names the
//! pipeline's agent steps give them.
//!
//! ```json
//! { "model_context_window": 16384, "encoding": "cl100k_base",
//!   "mcp_servers": { "files": { "command": "node", "args": ["/srv/fs/index.js", "/srv/docs"] } } }
//! ```
//!
//! Each entry replaces the `command`, `args`, `url` and `bearer_token_env` of every agent step's
//! server of that name (which of its tools a step offers stays the step's): the pipeline says what
//! a server is for, the deployment where it runs and which environment variable holds its token.
//! An entry needs exactly one of `command` and `url` (the rule of a step's own servers), and only
//! those keys, `args` and (with a `url`) `bearer_token_env`.

use serde_json::{Map, Value};

use crate::codes::Code;
use crate::pipeline::definition::{McpServerSpec, PipelineDef, StepKind};
use crate::validation::{ConfigIssue, FieldPath, did_you_mean};

/// The key.
pub(crate) const MCP_SERVERS: &str = "mcp_servers";

/// The keys of one server.
pub(crate) const SERVER_KEYS: [&str; 4] = ["command", "args", "url", "bearer_token_env"];

/// The servers of `value` (the key's value), every problem appended to `issues`.
pub(super) fn mcp_servers(value: Option<&Value>, issues: &mut Vec<ConfigIssue>) -> Vec<McpServerSpec> {
    let at = FieldPath::root().key(MCP_SERVERS);
    let servers = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Object(servers)) => servers,
        Some(other) => {
            issues.push(
                ConfigIssue::new(
                    Code::InvalidConfigValue,
                    at,
                    format!("`{MCP_SERVERS}` must be an object of servers by name, found {other}"),
                )
                .with_help(r#"write e.g. `"mcp_servers": { "files": { "command": "node", "args": ["server.js"] } }`"#),
            );
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (name, server) in servers {
        let at = at.key(name.as_str());
        let Value::Object(keys) = server else {
            issues.push(
                ConfigIssue::new(
                    Code::InvalidConfigValue,
                    at,
                    format!("MCP server `{name}` must be an object, found {server}"),
                )
                .with_help(r#"write `{ "command": "…", "args": ["…"] }` or `{ "url": "http://…" }`"#),
            );
            continue;
        };
        if let Some(server) = one_server(name, keys, &at, issues) {
            out.push(server);
        }
    }
    out
}

fn one_server(
    name: &str,
    keys: &Map<String, Value>,
    at: &FieldPath,
    issues: &mut Vec<ConfigIssue>,
) -> Option<McpServerSpec> {
    let before = issues.len();
    for key in keys.keys().filter(|k| !SERVER_KEYS.contains(&k.as_str())) {
        let help = match did_you_mean(key, SERVER_KEYS) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("the keys of a server are: {}", SERVER_KEYS.join(", ")),
        };
        issues.push(
            ConfigIssue::new(
                Code::UnknownConfigKey,
                at.key(key.as_str()),
                format!("unknown key `{key}` of MCP server `{name}`"),
            )
            .with_help(help),
        );
    }
    let mut text = |key: &str| match keys.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            issues.push(
                ConfigIssue::new(
                    Code::InvalidConfigValue,
                    at.key(key),
                    format!("`{key}` must be a string, found {other}"),
                )
                .with_help(format!("write `{key}` as a string, or remove it")),
            );
            None
        }
    };
    let (command, url, bearer_token_env) = (text("command"), text("url"), text("bearer_token_env"));
    let args = match keys.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()
        }
        Some(other) => {
            issues.push(
                ConfigIssue::new(
                    Code::InvalidConfigValue,
                    at.key("args"),
                    format!("`args` must be a list of strings, found {other}"),
                )
                .with_help(r#"write e.g. `"args": ["server.js", "--root", "/srv/docs"]`"#),
            );
            Vec::new()
        }
    };
    let transport = match (&command, &url) {
        (Some(_), None) if bearer_token_env.is_some() => Some("has `bearer_token_env` without a `url`"),
        (Some(_), None) | (None, Some(_)) => None,
        (None, None) => Some("has neither `command` nor `url`"),
        (Some(_), Some(_)) => Some("has both `command` and `url`"),
    };
    if let Some(what) = transport {
        issues.push(
            ConfigIssue::new(Code::AgentMcpServerTransport, at.clone(), format!("MCP server `{name}` {what}"))
                .with_help(r#"give the server one transport: `"command": "node", "args": ["server.js"]` or `"url": "http://127.0.0.1:3001/mcp"`"#),
        );
    }
    (issues.len() == before)
        .then(|| McpServerSpec::new(name).command(command).args(args).url(url).bearer_token_env(bearer_token_env))
}

/// Gives every agent step's server named in `servers` the transport `servers` gives it; a name
/// no agent step uses is an issue (at `mcp_servers.NAME` of the file), since a misspelt name
/// would otherwise leave the pipeline's own server running.
pub fn apply_config_mcp_servers(def: &mut PipelineDef, servers: &[McpServerSpec]) -> Vec<ConfigIssue> {
    let mut issues = Vec::new();
    let declared: Vec<String> = def
        .steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Agent(a) => Some(a.mcp_servers.iter().map(|m| m.name.clone())),
            _ => None,
        })
        .flatten()
        .collect();
    for server in servers {
        if !declared.contains(&server.name) {
            let help = match did_you_mean(&server.name, declared.iter().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`?"),
                None if declared.is_empty() => "no agent step names an MCP server; remove the entry".to_owned(),
                None => format!("the pipeline's servers are: {}", declared.join(", ")),
            };
            issues.push(
                ConfigIssue::new(
                    Code::UnknownConfigKey,
                    FieldPath::root().key(MCP_SERVERS).key(server.name.as_str()),
                    format!("the config file places MCP server `{}`, which no agent step names", server.name),
                )
                .with_help(help),
            );
        }
    }
    for step in &mut def.steps {
        let StepKind::Agent(agent) = &mut step.kind else { continue };
        for declared in &mut agent.mcp_servers {
            if let Some(placed) = servers.iter().find(|s| s.name == declared.name) {
                declared.command.clone_from(&placed.command);
                declared.args.clone_from(&placed.args);
                declared.url.clone_from(&placed.url);
                declared.bearer_token_env.clone_from(&placed.bearer_token_env);
            }
        }
    }
    issues
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigFile;
    use crate::pipeline::testing;

    fn codes(issues: &[ConfigIssue]) -> Vec<(String, String)> {
        issues.iter().map(|i| (i.code.to_string(), i.path.to_string())).collect()
    }

    #[test]
    fn a_config_file_places_the_pipelines_servers() {
        let file = ConfigFile::from_json_str(
            r#"{"model_context_window": 16384, "encoding": "cl100k_base",
                "mcp_servers": {"files": {"command": "node", "args": ["fs.js", "/srv"]}, "web": {"url": "http://127.0.0.1:9/mcp", "bearer_token_env": "WEB_TOKEN"}}}"#,
            "config.json",
        )
        .unwrap();
        assert_eq!(file.mcp_servers.len(), 2);
        assert_eq!(file.mcp_servers[1].bearer_token_env.as_deref(), Some("WEB_TOKEN"));
        let mut def = testing::def(vec![testing::agent("answer", "end")]);
        let StepKind::Agent(agent) = &mut def.steps[0].kind else { unreachable!() };
        agent.mcp_servers =
            vec![McpServerSpec::new("files").url(Some("http://dev/mcp".into())).tools(vec!["read_file".into()])];
        let issues = apply_config_mcp_servers(&mut def, &file.mcp_servers);
        assert_eq!(codes(&issues), [("UNKNOWN_CONFIG_KEY".to_owned(), "mcp_servers.web".to_owned())]);
        let StepKind::Agent(agent) = &def.steps[0].kind else { unreachable!() };
        let expected = McpServerSpec::new("files")
            .command(Some("node".into()))
            .args(vec!["fs.js".into(), "/srv".into()])
            .tools(vec!["read_file".into()]);
        assert_eq!(agent.mcp_servers, [expected]);
    }

    #[test]
    fn each_server_of_a_config_file_has_one_transport_and_known_keys() {
        let err = ConfigFile::from_json_str(
            r#"{"model_context_window": 16384, "encoding": "cl100k_base",
                "mcp_servers": {"a": {"comand": "node"}, "b": {"command": "x", "url": "http://h"}, "c": {"url": 3},
                                "d": {"command": "x", "args": "y"}, "e": 1,
                                "f": {"command": "x", "bearer_token_env": "T"}}}"#,
            "config.json",
        )
        .unwrap_err();
        let crate::config::ConfigFileError::Invalid { issues, .. } = err else { panic!("{err}") };
        assert_eq!(
            codes(&issues),
            [
                ("UNKNOWN_CONFIG_KEY".to_owned(), "mcp_servers.a.comand".to_owned()),
                ("AGENT_MCP_SERVER_TRANSPORT".to_owned(), "mcp_servers.a".to_owned()),
                ("AGENT_MCP_SERVER_TRANSPORT".to_owned(), "mcp_servers.b".to_owned()),
                ("INVALID_CONFIG_VALUE".to_owned(), "mcp_servers.c.url".to_owned()),
                ("AGENT_MCP_SERVER_TRANSPORT".to_owned(), "mcp_servers.c".to_owned()),
                ("INVALID_CONFIG_VALUE".to_owned(), "mcp_servers.d.args".to_owned()),
                ("INVALID_CONFIG_VALUE".to_owned(), "mcp_servers.e".to_owned()),
                ("AGENT_MCP_SERVER_TRANSPORT".to_owned(), "mcp_servers.f".to_owned()),
            ]
        );
        assert!(issues[0].help.as_deref().unwrap().contains("`command`"), "{:?}", issues[0]);
    }
}
