//! `ctx run` on a YAML pipeline whose agent step takes its tools from a real MCP server
//! (`@modelcontextprotocol/server-filesystem`, installed by `scripts/mcp-servers.sh`): the run's
//! report shows the server's tool schemas and the tool's result inside the window, and a
//! server that cannot start is named before anything runs.
//!
//! Outside CI, without the servers (`CTX_MCP_*` unset), each test says so and passes; under
//! `CI=true` a missing server fails it.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

/// `(node, server-filesystem's entry point)`, or `None` (with the reason printed) to skip.
fn filesystem_server(test: &str) -> Option<(String, String)> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    match (var("CTX_MCP_NODE"), var("CTX_MCP_FILESYSTEM")) {
        (Some(node), Some(server)) => Some((node, server)),
        _ => {
            assert!(
                std::env::var("CI").ok().as_deref() != Some("true"),
                "CTX_MCP_* are not set under CI: .ci/run must run scripts/mcp-servers.sh provision and eval its env"
            );
            let _ = writeln!(
                std::io::stderr(),
                "skipped {test}: no MCP servers (scripts/mcp-servers.sh provision; eval \"$(scripts/mcp-servers.sh env)\")"
            );
            None
        }
    }
}

/// A pipeline file in `dir` whose agent step reads files through the filesystem server run
/// with `command` and `args`.
fn pipeline(dir: &Path, command: &str, args: &[&str]) -> std::path::PathBuf {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
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
    files:
      command: {command:?}
      args: [{}]
      tools: [read_text_file, list_directory]
  next: end
",
        args.join(", ")
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
