//! The MCP servers ctx's MCP tests run against, as `scripts/mcp-servers.sh env` names them, and
//! the one rule for a test without them: outside CI it says why and passes, under `CI=true` it
//! fails. Shared by ctx-runtime's MCP tests and ctx-cli's (`#[path]`), which is why it uses
//! nothing but std.

#![allow(dead_code)] // Each test binary uses some of it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The servers' entry points and node.
pub struct Servers {
    /// `node`.
    pub node: String,
    /// server-everything's entry point.
    pub everything: String,
    /// server-filesystem's entry point.
    pub filesystem: String,
    /// `scripts/mcp-servers.sh`, which starts and stops server-everything over Streamable HTTP.
    pub script: PathBuf,
    /// The Streamable HTTP server `.ci/run` started (`scripts/mcp-servers.sh start`), if running.
    pub http_url: Option<String>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// `None`, after saying why `test` is skipped; under CI, a failure instead.
fn skip<T>(test: &str, missing: &str, how: &str) -> Option<T> {
    assert!(
        std::env::var("CI").ok().as_deref() != Some("true"),
        "{missing} under CI: .ci/run must run {how} and eval \"$(scripts/mcp-servers.sh env)\""
    );
    let _ = writeln!(std::io::stderr(), "skipped {test}: {missing} ({how}; eval \"$(scripts/mcp-servers.sh env)\")");
    None
}

/// The installed servers, or `None` (the reason printed) to skip `test`.
pub fn servers(test: &str) -> Option<Servers> {
    match (var("CTX_MCP_NODE"), var("CTX_MCP_EVERYTHING"), var("CTX_MCP_FILESYSTEM"), var("CTX_MCP_SCRIPT")) {
        (Some(node), Some(everything), Some(filesystem), Some(script)) => Some(Servers {
            node,
            everything,
            filesystem,
            script: PathBuf::from(script),
            http_url: var("CTX_MCP_HTTP_URL"),
        }),
        _ => skip(test, "no MCP servers: CTX_MCP_* are not set", "scripts/mcp-servers.sh provision"),
    }
}

/// The installed servers with the Streamable HTTP server running, and its URL; or `None` (the
/// reason printed) to skip `test`.
pub fn http_server(test: &str) -> Option<(Servers, String)> {
    let servers = servers(test)?;
    match servers.http_url.clone() {
        Some(url) => Some((servers, url)),
        None => {
            skip(test, "no Streamable HTTP MCP server: CTX_MCP_HTTP_URL is not set", "scripts/mcp-servers.sh start")
        }
    }
}

/// A server-everything over Streamable HTTP of a test's own, on `port` of 127.0.0.1, started
/// and stopped by the script (by its recorded pid); stopped when dropped.
pub struct OwnHttpServer {
    script: PathBuf,
    port: u16,
    /// Its endpoint.
    pub url: String,
}

impl OwnHttpServer {
    /// Starts it; panics with the script's words when it cannot.
    pub fn start(servers: &Servers, port: u16) -> OwnHttpServer {
        let server =
            OwnHttpServer { script: servers.script.clone(), port, url: format!("http://127.0.0.1:{port}/mcp") };
        server.run("start");
        server
    }

    /// Stops it (a second stop says it is not running).
    pub fn stop(&self) {
        self.run("stop");
    }

    fn run(&self, command: &str) {
        let out = Command::new("bash")
            .arg(&self.script)
            .arg(command)
            .env("CTX_MCP_HTTP_PORT", self.port.to_string())
            .output()
            .expect("bash runs");
        assert!(out.status.success(), "mcp-servers.sh {command}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for OwnHttpServer {
    fn drop(&mut self) {
        let _ =
            Command::new("bash").arg(&self.script).arg("stop").env("CTX_MCP_HTTP_PORT", self.port.to_string()).output();
    }
}

/// `path` made absolute and canonical (the filesystem server resolves symlinks).
pub fn real(path: &Path) -> String {
    std::fs::canonicalize(path).unwrap().display().to_string()
}
