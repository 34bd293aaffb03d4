//! `mcp_servers` of an `agent` step: the MCP servers whose tools the step offers, read the same
//! way by both front ends.
//!
//! * The DSL: `mcp_servers: [ files { command: "node", args: ["server.js", "docs"], tools: [read_file] } ]`.
//! * YAML: a mapping `mcp_servers: { files: { command: node, args: [...] } }`, or a list of
//!   `{ name, command, args, url, bearer_token_env, tools }`.
//!
//! The list is read by the reader of every list of named blocks ([`super::named`]), as an
//! agent's `tools` are.
//!
//! Which of `command` and `url` a server must have is a rule (`validate_agent`), not a shape:
//! both are optional here, so the decoder reports only what it cannot read.

use super::decoder::Decoder;
use super::named::{Named, NamedForm, named_blocks};
use super::value::{Kind, Value};
use crate::pipeline::definition::McpServerSpec;
use crate::validation::FieldPath;

/// `[ name { command?, args?, url?, bearer_token_env?, tools? }, … ]`, or YAML's mapping or list
/// forms.
pub(super) fn mcp_servers(
    dec: &mut Decoder,
    value: &Value,
    path: &FieldPath,
    what: &str,
) -> Option<Vec<McpServerSpec>> {
    let form = NamedForm {
        noun: "MCP server",
        a_noun: "an MCP server",
        keys: &crate::pipeline::schema::forms::MCP_SERVER,
        yaml_mapping: true,
        dsl_block: false,
        expected_dsl: "a list of servers `[ files { command: \"…\", args: [\"…\"] } ]`",
        expected_yaml: "a mapping of `name: { command, args }` (or `{ url }`)",
        name: Decoder::name_or_text,
        name_what: "`name` of a server",
    };
    let mut servers = Vec::new();
    for Named { at, name, block: b } in named_blocks(dec, value, path, what, &form)? {
        let Some(b) = b else { continue };
        let mut ok = name.is_some();
        let mut server = McpServerSpec::new(name.unwrap_or_default());
        let mut text = |dec: &mut Decoder, key: &str, what: &str| match b.get(key) {
            Some((_, v)) => {
                let text = dec.text(v, &at.key(key), what);
                ok &= text.is_some();
                text
            }
            None => None,
        };
        server.command = text(dec, "command", "`command` of an MCP server");
        server.url = text(dec, "url", "`url` of an MCP server");
        server.bearer_token_env = text(dec, "bearer_token_env", "`bearer_token_env` of an MCP server");
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
