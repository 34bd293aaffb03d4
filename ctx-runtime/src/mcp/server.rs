//! One connection to an MCP server through `rmcp`: the transport (a spawned process's standard
//! input and output, or Streamable HTTP to a URL, [`super::http`]), the handshake, the tool
//! list, and tool calls turned into text.
//!
//! A spawned process is ctx's own child (`kill_on_drop`), not the SDK's, so that dropping a
//! connection outside an async runtime kills it without needing one, and so that a server that
//! died can be told apart from one that failed a call (its exit status). Its standard error is
//! drained as it is written, the last [`STDERR_TAIL`] bytes kept for the error messages. A
//! server reached by URL has no process here: a call that gets no answer (the connection
//! refused or dropped) is what says it stopped.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::error::McpError;
use super::http::{self, Failure};
use super::options::McpOptions;
use crate::pipeline::definition::{McpServerSpec, ToolSpec};

/// How much of a server's standard error is kept for messages.
pub(super) const STDERR_TAIL: usize = 4 * 1024;

/// A running server.
pub(super) struct Server {
    /// The name the (first) step that declares it gives it.
    pub(super) name: String,
    /// Its command line or URL, for messages.
    pub(super) transport: String,
    /// What it was declared with: steps that declare the same transport share the connection.
    pub(super) spec: McpServerSpec,
    service: RunningService<RoleClient, ()>,
    /// The process of a server spawned by command; `None` for a URL.
    process: Option<Process>,
    /// Every tool it listed, as declared tools are written.
    pub(super) tools: Vec<ToolSpec>,
}

/// A spawned server's process and the end of its standard error.
struct Process {
    child: Mutex<Child>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("name", &self.name).field("transport", &self.transport).finish_non_exhaustive()
    }
}

impl Server {
    /// Spawns `spec`'s command (or connects to its URL), completes the handshake and lists its
    /// tools, each within `options.start_timeout`.
    pub(super) async fn start(spec: &McpServerSpec, options: &McpOptions) -> Result<Server, McpError> {
        let timeout = options.start_timeout;
        let name = spec.name.clone();
        let transport = transport_text(spec);
        let fail = |reason: String, stderr: String| McpError::Start {
            server: name.clone(),
            transport: transport.clone(),
            reason,
            stderr,
        };
        let mut process = None;
        let mut reader = None;
        let handshake = match (spec.command.as_deref(), spec.url.as_deref()) {
            (Some(command), _) => {
                let spawned = spawn(command, &spec.args).map_err(|e| fail(e, String::new()))?;
                (process, reader) = (Some(spawned.process), spawned.reader);
                tokio::time::timeout(timeout, ().serve(spawned.pipes)).await
            }
            (None, Some(url)) => {
                let http = http::transport(spec, url, options.max_result_bytes).map_err(|e| fail(e, String::new()))?;
                tokio::time::timeout(timeout, ().serve(http)).await
            }
            (None, None) => return Err(fail("it has neither `command` nor `url`".to_owned(), String::new())),
        };
        let service = match handshake {
            Ok(Ok(service)) => service,
            Ok(Err(e)) => {
                let stderr = settle(process.as_mut(), reader.take()).await;
                let why = http::cause(&e).unwrap_or_else(|| chain(&e));
                return Err(fail(format!("the handshake failed: {why}"), stderr));
            }
            Err(_) => {
                let stderr = settle(process.as_mut(), reader.take()).await;
                return Err(fail(format!("no handshake within {timeout:?}"), stderr));
            }
        };
        let listed = tokio::time::timeout(timeout, service.peer().list_all_tools()).await;
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            Ok(Err(e)) => {
                let stderr = settle(process.as_mut(), reader.take()).await;
                let why = http::cause(&e).unwrap_or_else(|| chain(&e));
                return Err(fail(format!("listing its tools failed: {why}"), stderr));
            }
            Err(_) => {
                let stderr = settle(process.as_mut(), reader.take()).await;
                return Err(fail(format!("no tool list within {timeout:?}"), stderr));
            }
        };
        let tools = tools.iter().map(tool_spec).collect::<Result<Vec<_>, _>>().map_err(|e| fail(e, String::new()))?;
        Ok(Server { name, transport, spec: spec.clone(), service, process, tools })
    }

    /// Calls `tool` with `arguments` (a JSON object), within `timeout`: the result's content as
    /// text, and whether the server marked it an error.
    pub(super) async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
        max_bytes: usize,
    ) -> Result<(String, bool), McpError> {
        let params: CallToolRequestParams =
            serde_json::from_value(serde_json::json!({ "name": tool, "arguments": arguments })).map_err(|e| {
                McpError::ToolFailed { server: self.name.clone(), tool: tool.to_owned(), message: e.to_string() }
            })?;
        let result = match tokio::time::timeout(timeout, self.service.peer().call_tool(params)).await {
            Ok(Ok(result)) => result,
            Ok(Err(ServiceError::McpError(e))) => {
                return Err(McpError::ToolFailed {
                    server: self.name.clone(),
                    tool: tool.to_owned(),
                    message: format!("{} (JSON-RPC error {})", e.message, e.code.0),
                });
            }
            Ok(Err(e)) => return Err(self.closed_or_failed(tool, e, max_bytes).await),
            Err(_) => {
                return Err(McpError::ToolFailed {
                    server: self.name.clone(),
                    tool: tool.to_owned(),
                    message: format!("no answer within {timeout:?}"),
                });
            }
        };
        let value = serde_json::to_value(&result).map_err(|e| McpError::ToolFailed {
            server: self.name.clone(),
            tool: tool.to_owned(),
            message: e.to_string(),
        })?;
        let text = result_text(&value);
        if text.len() > max_bytes {
            return Err(McpError::ResultTooLarge {
                server: self.name.clone(),
                tool: tool.to_owned(),
                bytes: text.len(),
                limit: max_bytes,
            });
        }
        Ok((text, value.get("isError").and_then(Value::as_bool).unwrap_or(false)))
    }

    /// A transport failure of a call of `tool`: [`McpError::Closed`] when the server stopped —
    /// its process has ended (or ends within a moment: the connection closes before the exit is
    /// reaped), or, by URL, no answer reached ctx — else a failed call.
    async fn closed_or_failed(&self, tool: &str, error: ServiceError, max_bytes: usize) -> McpError {
        let closed = |status: Option<String>, stderr: String| McpError::Closed {
            server: self.name.clone(),
            tool: tool.to_owned(),
            status,
            stderr,
        };
        let failed =
            |message: String| McpError::ToolFailed { server: self.name.clone(), tool: tool.to_owned(), message };
        let Some(process) = &self.process else {
            return match http::failure(&error) {
                Failure::Unreachable(why) => {
                    closed(Some(format!("stopped answering at {}: {why}", self.transport)), String::new())
                }
                Failure::TooLarge => failed(format!(
                    "its answer is larger than the {} bytes read for a result of at most {max_bytes} bytes \
                     (`max_result_bytes`, escaped in JSON)",
                    http::max_response_bytes(max_bytes)
                )),
                Failure::Answered(message) => failed(message),
            };
        };
        for _ in 0..20 {
            let status = process.child.lock().unwrap_or_else(std::sync::PoisonError::into_inner).try_wait();
            match status {
                Ok(Some(status)) => return closed(Some(exit_text(status)), process.stderr_text()),
                Ok(None) => tokio::time::sleep(Duration::from_millis(25)).await,
                Err(_) => break,
            }
        }
        if self.service.is_closed() {
            return closed(None, process.stderr_text());
        }
        failed(error.to_string())
    }

    /// Ends the session and the process. A server reached by URL is told the session ends
    /// (within a few seconds: one that stopped answering is not waited for).
    pub(super) async fn close(self) {
        let Server { mut service, process, .. } = self;
        let _ = tokio::time::timeout(Duration::from_secs(5), service.close()).await;
        let Some(process) = process else { return };
        let mut child = process.child.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        if tokio::time::timeout(Duration::from_secs(2), child.wait()).await.is_err() {
            let _ = child.kill().await;
        }
    }
}

impl Process {
    fn stderr_text(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&tail).into_owned()
    }
}

/// A process just spawned: the task draining its standard error, and the pipes to speak over.
struct Spawned {
    process: Process,
    reader: Option<tokio::task::JoinHandle<()>>,
    pipes: (ChildStdout, ChildStdin),
}

/// Spawns `command` with `args`, its standard error drained into the process's tail; the reason
/// when it cannot be.
fn spawn(command: &str, args: &[String]) -> Result<Spawned, String> {
    let mut child = Command::new(command)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| e.to_string())?;
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let mut reader = None;
    if let Some(mut pipe) = child.stderr.take() {
        let tail = Arc::clone(&stderr);
        reader = Some(tokio::spawn(async move {
            let mut buf = vec![0u8; 8 * 1024];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut tail = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                tail.extend_from_slice(&buf[..n]);
                let over = tail.len().saturating_sub(STDERR_TAIL);
                tail.drain(..over);
            }
        }));
    }
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err("its standard input or output could not be opened".into());
    };
    Ok(Spawned { process: Process { child: Mutex::new(child), stderr }, reader, pipes: (stdout, stdin) })
}

/// An error with its causes, for a message: an HTTP client's error alone says "error sending
/// request", its causes why ("connection refused").
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// What a spawned server that failed to start wrote, once it has had a moment to exit and its
/// standard error has been read to the end (nothing for a server reached by URL).
async fn settle(process: Option<&mut Process>, reader: Option<tokio::task::JoinHandle<()>>) -> String {
    let Some(process) = process else { return String::new() };
    let child = process.child.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
    if tokio::time::timeout(Duration::from_secs(1), child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
    if let Some(reader) = reader {
        let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
    }
    process.stderr_text()
}

fn exit_text(status: std::process::ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("was ended by a signal ({status})"),
    }
}

/// The command line (`node server.js docs`) or URL of a server, for messages.
pub(super) fn transport_text(spec: &McpServerSpec) -> String {
    match (&spec.command, &spec.url) {
        (Some(command), _) => {
            std::iter::once(command.as_str()).chain(spec.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
        }
        (None, Some(url)) => url.clone(),
        (None, None) => "no transport".to_owned(),
    }
}

/// A listed tool as a declared one: its name, its description (else its title, else empty,
/// which the tool rules then report), its input schema as JSON text.
fn tool_spec(tool: &rmcp::model::Tool) -> Result<ToolSpec, String> {
    let value = serde_json::to_value(tool).map_err(|e| format!("a listed tool cannot be read: {e}"))?;
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let name = text("name").unwrap_or_default();
    let description =
        text("description").filter(|d| !d.trim().is_empty()).or_else(|| text("title")).unwrap_or_default();
    let schema = value.get("inputSchema").cloned().unwrap_or(Value::Null);
    let parameters = serde_json::to_string(&schema).map_err(|e| format!("the schema of tool `{name}`: {e}"))?;
    Ok(ToolSpec::new(name, description, parameters))
}

/// A result's content as one text, block after block: text as it is, a resource's text or its
/// URI, binary content (an image, audio, a blob) as a line saying what it was, never its
/// base64; the structured content as JSON when there is no other content.
pub(super) fn result_text(result: &Value) -> String {
    let mut parts = Vec::new();
    for block in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        let text = |key: &str| block.get(key).and_then(Value::as_str);
        let part = match text("type").unwrap_or_default() {
            "text" => text("text").unwrap_or_default().to_owned(),
            "resource" => {
                let resource = block.get("resource").unwrap_or(&Value::Null);
                let field = |key: &str| resource.get(key).and_then(Value::as_str);
                match (field("text"), field("uri")) {
                    (Some(t), _) => t.to_owned(),
                    (None, Some(uri)) => format!("[binary resource {uri}]"),
                    (None, None) => "[resource]".to_owned(),
                }
            }
            "resource_link" => format!("[resource {}]", text("uri").unwrap_or_default()),
            kind => {
                let mime = text("mimeType").unwrap_or("unknown type");
                format!("[{kind} content, {mime}]")
            }
        };
        parts.push(part);
    }
    if parts.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        return structured.to_string();
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_blocks_become_one_text_without_base64() {
        let result = serde_json::json!({
            "content": [
                { "type": "text", "text": "first" },
                { "type": "image", "data": "AAAA", "mimeType": "image/png" },
                { "type": "resource", "resource": { "uri": "file:///a", "text": "body" } },
                { "type": "resource", "resource": { "uri": "file:///b", "blob": "AAAA" } },
                { "type": "resource_link", "uri": "file:///c", "name": "c" }
            ]
        });
        assert_eq!(
            result_text(&result),
            "first\n[image content, image/png]\nbody\n[binary resource file:///b]\n[resource file:///c]"
        );
        let structured = serde_json::json!({ "content": [], "structuredContent": { "sum": 3 } });
        assert_eq!(result_text(&structured), r#"{"sum":3}"#);
    }

    #[test]
    fn a_transport_is_named_by_its_command_line_or_url() {
        let spec = McpServerSpec::new("files").command(Some("node".into())).args(vec!["s.js".into(), "docs".into()]);
        assert_eq!(transport_text(&spec), "node s.js docs");
        assert_eq!(
            transport_text(&McpServerSpec::new("w").url(Some("http://127.0.0.1:1/mcp".into()))),
            "http://127.0.0.1:1/mcp"
        );
    }
}
