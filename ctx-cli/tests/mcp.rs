//! `ctx run` and `ctx explain` on a YAML pipeline whose agent step takes its tools from a real
//! MCP server (`@modelcontextprotocol/server-filesystem` over stdio, `server-everything` over
//! Streamable HTTP, both from `scripts/mcp-servers.sh`): the run's report shows the server's
//! tool schemas and the tool's result inside the window, `explain` counts the schemas the server
//! lists, a server that cannot start is named before anything runs, and a bearer token goes from
//! the variable the file names to the server (a loopback listener here) and nowhere else.
//!
//! Outside CI, without the servers (`CTX_MCP_*` unset), each test that needs them says so and
//! passes; under `CI=true` a missing server fails it.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

#[path = "../../ctx-runtime/tests/mcp_support/mod.rs"]
mod mcp_support;

/// `(node, server-filesystem's entry point)`, or `None` (with the reason printed) to skip.
fn filesystem_server(test: &str) -> Option<(String, String)> {
    mcp_support::servers(test).map(|s| (s.node, s.filesystem))
}

/// A pipeline file in `dir` whose agent step reads files through the filesystem server run
/// with `command` and `args`.
fn pipeline(dir: &Path, command: &str, args: &[&str]) -> std::path::PathBuf {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    let server = format!(
        "command: {command:?}\n      args: [{}]\n      tools: [read_text_file, list_directory]",
        args.join(", ")
    );
    pipeline_with(dir, "files", &server)
}

/// A pipeline file in `dir` whose agent step takes its tools from the MCP server `name`, whose
/// keys (indented under it) are `server`.
fn pipeline_with(dir: &Path, name: &str, server: &str) -> std::path::PathBuf {
    let yaml = format!(
        "name: Files
model: {{ context_window: 16384, max_tokens: 600, encoding: cl100k_base }}
settings: {{ max_context_tokens: 1, budget_safety_margin_tokens: 64 }}
prompts:
  answer: \"Answer from the files the tools read.\"
steps:
- id: answer
  action: agent
  prompt_key: answer
  max_output_tokens: 600
  max_tool_calls: 2
  mcp_servers:
    {name}:
      {server}
  next: end
"
    );
    let path = dir.join("files.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

#[test]
fn run_offers_the_servers_tools_and_reports_their_schemas_and_results_in_the_window() {
    let Some((node, server)) =
        filesystem_server("run_offers_the_servers_tools_and_reports_their_schemas_and_results_in_the_window")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("release.md"), "# Release\n\nThe release train leaves on Thursdays at 10:00.\n").unwrap();
    let docs = std::fs::canonicalize(&docs).unwrap();
    let file = pipeline(dir.path(), &node, &[&server, &docs.display().to_string()]);
    let report = dir.path().join("run.html");
    // The offline model calls the first tool (`read_text_file`) with the question as its path.
    let out = Command::new(env!("CARGO_BIN_EXE_ctx"))
        .arg("run")
        .arg(&file)
        .arg("--report")
        .arg(&report)
        .arg("--")
        .arg(docs.join("release.md"))
        .env_remove("CTX_BASE_URL")
        .output()
        .expect("the ctx binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("[mcp files of answer: 14 tools listed, offered: read_text_file, list_directory]"),
        "{stderr}"
    );
    assert!(stderr.contains("1 tool calls"), "{stderr}");
    // The offline model answers with the lines of the result that share a term with the question.
    assert!(String::from_utf8_lossy(&out.stdout).contains("Thursdays at 10:00"));
    let html = std::fs::read_to_string(&report).expect("the report was written");
    // Each request offering the tools has the server's schemas as a part of its window, and the
    // second also the call and its result, each with its exact count.
    let parts = |label: &str| -> Vec<usize> {
        html.split("<tr class=\"part ")
            .map(|row| &row[..row.find("</tr>").expect("a closed row")])
            .filter(|row| row.contains(&format!("</span>{label}</td>")))
            .map(|row| {
                let at = row.find("data-tokens=\"").expect("a count") + "data-tokens=\"".len();
                row[at..at + row[at..].find('"').unwrap()].parse().expect("a number")
            })
            .collect()
    };
    let schemas = parts("tool schemas (read_text_file, list_directory)");
    assert!(!schemas.is_empty() && schemas.iter().all(|&n| n > 0 && n == schemas[0]), "{schemas:?}");
    let results = parts("tool call read_text_file + result");
    assert!(!results.is_empty() && results.iter().all(|&n| n > 0), "{results:?}");
}

#[test]
fn run_names_a_server_that_cannot_start() {
    let Some(_) = filesystem_server("run_names_a_server_that_cannot_start") else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = pipeline(dir.path(), "/nonexistent/mcp-server", &[]);
    let out = Command::new(env!("CARGO_BIN_EXE_ctx"))
        .args(["run"])
        .arg(&file)
        .args(["--", "/tmp/x"])
        .env_remove("CTX_BASE_URL")
        .output()
        .expect("the ctx binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("MCP server `files` (/nonexistent/mcp-server) could not be started"), "{stderr}");
    assert!(stderr.contains("[MCP_SERVER_START]"), "{stderr}");
}

/// Runs `ctx` with `args` (no model server, `CTX_TEST_MCP_TOKEN` as `token` says): its exit,
/// standard output and standard error.
fn ctx(args: &[&std::ffi::OsStr], token: Option<&str>) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctx"));
    command.args(args).env_remove("CTX_BASE_URL").env_remove("CTX_TEST_MCP_TOKEN");
    if let Some(token) = token {
        command.env("CTX_TEST_MCP_TOKEN", token);
    }
    let out = command.output().expect("the ctx binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn run_reaches_a_streamable_http_server_by_url() {
    let Some((_, url)) = mcp_support::http_server("run_reaches_a_streamable_http_server_by_url") else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = pipeline_with(dir.path(), "everything", &format!("url: {url:?}\n      tools: [echo]"));
    // The offline model calls `echo` with the question as its message, and answers with the
    // lines of the result that share a term with the question.
    let (ok, stdout, stderr) = ctx(&["run".as_ref(), file.as_os_str(), "--".as_ref(), "lighthouse".as_ref()], None);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("[mcp everything of answer: ") && stderr.contains("offered: echo]"), "{stderr}");
    assert!(stdout.contains("Echo: lighthouse"), "{stdout}");
}

#[test]
fn explain_counts_the_tool_schemas_a_server_lists_now() {
    let Some((_, url)) = mcp_support::http_server("explain_counts_the_tool_schemas_a_server_lists_now") else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = pipeline_with(dir.path(), "everything", &format!("url: {url:?}\n      tools: [echo]"));
    let (ok, stdout, stderr) = ctx(&["explain".as_ref(), file.as_os_str()], None);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("agent step `answer` offers 1 tool of MCP server `everything`"), "{stdout}");
    // The step's row: its tool-schema term is the schema of `echo`, counted.
    let row = stdout.lines().find(|l| l.starts_with("| answer |")).expect("the step's row");
    let schemas: usize = row.split('|').nth(3).unwrap().trim().parse().unwrap();
    assert!(schemas > 0, "{row}");

    // Without the server the contract cannot be proven: said so, at the server.
    let file = pipeline_with(dir.path(), "everything", "url: \"http://127.0.0.1:9/mcp\"");
    let (ok, _, stderr) = ctx(&["explain".as_ref(), file.as_os_str()], None);
    assert!(!ok);
    assert!(stderr.contains("MCP server `everything` (http://127.0.0.1:9/mcp) could not be started"), "{stderr}");
    assert!(stderr.contains("their tool schemas are part of the contract"), "{stderr}");
}

/// A loopback HTTP listener that answers every request with 401 and keeps each request's head.
fn refusing_listener() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&heads);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).map(|n| n == 1).unwrap_or(false) {
                head.push(byte[0]);
            }
            kept.lock().unwrap().push(String::from_utf8_lossy(&head).into_owned());
            let _ = stream.write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    (url, heads)
}

#[test]
fn a_bearer_token_is_sent_from_the_variable_the_file_names_and_never_shown() {
    let (url, heads) = refusing_listener();
    let dir = tempfile::tempdir().unwrap();
    let server = format!("url: {url:?}\n      bearer_token_env: CTX_TEST_MCP_TOKEN");
    let file = pipeline_with(dir.path(), "web", &server);
    let args = ["run".as_ref(), file.as_os_str(), "--".as_ref(), "q".as_ref()];

    // No variable: nothing is sent, and the message names the variable.
    let (ok, _, stderr) = ctx(&args, None);
    assert!(!ok);
    assert!(
        stderr.contains("the environment variable `CTX_TEST_MCP_TOKEN` (its `bearer_token_env`) is not set"),
        "{stderr}"
    );
    assert!(heads.lock().unwrap().is_empty());

    // With it, every request carries it; the server's refusal fails the start, without the token.
    let (ok, stdout, stderr) = ctx(&args, Some("s3cret-token"));
    assert!(!ok);
    assert!(stderr.contains("MCP server `web`") && stderr.contains("[MCP_SERVER_START]"), "{stderr}");
    assert!(!stderr.contains("s3cret-token") && !stdout.contains("s3cret-token"), "{stderr}");
    let heads = heads.lock().unwrap();
    assert!(!heads.is_empty());
    for head in heads.iter() {
        let auth = head.lines().find(|l| l.to_ascii_lowercase().starts_with("authorization:"));
        assert_eq!(auth.map(|l| l["authorization:".len()..].trim()), Some("Bearer s3cret-token"), "{head}");
    }
}
