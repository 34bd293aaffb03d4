//! `mcp_servers` of an `agent` step: the MCP servers whose tools the step offers, read the same
//! way by both front ends.
//!
//! * The DSL: `mcp_servers: [ files { command: "node", args: ["server.js", "docs"], tools: [read_file] } ]`.
//! * YAML: a mapping `mcp_servers: { files: { command: node, args: [...] } }`, or a list of
//!   `{ name, command, args, url, tools }`.
//!
//! Which of `command` and `url` a server must have is a rule (`validate_agent`), not a shape:
//! both are optional here, so the decoder reports only what it cannot read.

use super::block::Block;
use super::decoder::{Decoder, Dialect};
use super::value::{Kind, Value};
use crate::codes::Code;
use crate::pipeline::definition::McpServerSpec;
use crate::validation::FieldPath;

/// The keys of one server's block.
const SERVER_KEYS: [&str; 4] = crate::pipeline::schema::forms::MCP_SERVER;

/// `[ name { command?, args?, url?, tools? }, … ]`, or YAML's mapping or list forms.
pub(super) fn mcp_servers(
    dec: &mut Decoder,
    value: &Value,
    path: &FieldPath,
    what: &str,
) -> Option<Vec<McpServerSpec>> {
    dec.locate(path, value.at);
    let expected = match dec.dialect {
        Dialect::Dsl => "a list of servers `[ files { command: \"…\", args: [\"…\"] } ]`",
        Dialect::Yaml => "a mapping of `name: { command, args }` (or `{ url }`)",
    };
    let items = match (&value.kind, dec.dialect) {
        (Kind::List(items), _) => items,
        (Kind::Map(items), Dialect::Yaml) => items,
        _ => {
            dec.wrong_type(value, path, what, expected);
            return None;
        }
    };
    let mut servers = Vec::new();
    for (j, item) in items.iter().enumerate() {
        let at = path.index(j);
        dec.locate(&at, item.at);
        let (name, b) = match &item.kind {
            Kind::Named { name, body } => {
                dec.locate(&at.key("name"), name.at);
                let label = format!("MCP server `{}`", name.text);
                let Some(b) = Block::read(dec, body, label, &at, &SERVER_KEYS) else { continue };
                (Some(name.text.clone()), b)
            }
            Kind::Entry { key, value } if dec.dialect == Dialect::Yaml => {
                dec.locate(&at.key("name"), key.at);
                let label = format!("MCP server `{}`", key.text);
                let Some(b) = Block::read(dec, value, label, &at, &SERVER_KEYS) else { continue };
                (Some(key.text.clone()), b)
            }
            Kind::Map(_) if dec.dialect == Dialect::Yaml => {
                let label = format!("MCP server {j} of {what}");
                let mut keys = vec!["name"];
                keys.extend(SERVER_KEYS);
                let Some(b) = Block::read(dec, item, label, &at, &keys) else { continue };
                (b.require(dec, "name").and_then(|v| dec.name_or_text(v, &at.key("name"), "`name` of a server")), b)
            }
            _ => {
                dec.poison(&at);
                dec.report(
                    item.at,
                    Code::YamlWrongType,
                    &at,
                    format!("expected an MCP server in {what}"),
                    format!("write {expected}"),
                );
                continue;
            }
        };
        let mut ok = name.is_some();
        let mut server = McpServerSpec::new(name.unwrap_or_default());
        if let Some((_, v)) = b.get("command") {
            server.command = dec.text(v, &at.key("command"), "`command` of an MCP server");
            ok &= server.command.is_some();
        }
        if let Some((_, v)) = b.get("url") {
            server.url = dec.text(v, &at.key("url"), "`url` of an MCP server");
            ok &= server.url.is_some();
        }
        if let Some((_, v)) = b.get("args") {
            match dec.text_list(v, &at.key("args"), "`args` of an MCP server") {
                Some(args) => server.args = args,
                None => ok = false,
            }
        }
        if let Some((_, v)) = b.get("tools") {
            match tool_names(dec, v, &at.key("tools")) {
                Some(tools) => server.tools = tools,
                None => ok = false,
            }
        }
        if ok {
            servers.push(server);
        } else {
            dec.poison(&at);
        }
    }
    Some(servers)
}

/// `[ read_file, "list_directory" ]`: names, bare or quoted.
fn tool_names(dec: &mut Decoder, value: &Value, path: &FieldPath) -> Option<Vec<String>> {
    let what = "`tools` of an MCP server";
    let Kind::List(items) = &value.kind else {
        dec.wrong_type(value, path, what, "a list of tool names `[ read_file ]`");
        return None;
    };
    let mut out = Some(Vec::new());
    for (j, item) in items.iter().enumerate() {
        match dec.name_or_text(item, &path.index(j), what) {
            Some(name) => out.as_mut().map(|o| o.push(name)),
            None => out.take().map(|_| ()),
        };
    }
    out
}
