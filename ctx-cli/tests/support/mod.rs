//! What the `ctx` tests share: running the binary as a user does, a scratch directory, and a
//! scripted OpenAI-compatible server on 127.0.0.1 that records every request body.

#![allow(dead_code)] // each test binary uses its own part

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// The workspace root, where `examples/` is; the binary runs there.
pub fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).canonicalize().expect("the workspace root")
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// `ctx` with `args`, from the workspace root, in an environment without any model variable
/// (and without `NO_COLOR`), plus `env`.
pub fn ctx(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctx"));
    command.args(args).current_dir(root());
    for (name, _) in std::env::vars_os().filter_map(|(n, v)| n.into_string().ok().map(|n| (n, v))) {
        if name.starts_with("CTX_")
            || name.starts_with("OPENAI_")
            || name == "NO_COLOR"
            || name == "PIPELINE_LIMITS_POLICY"
        {
            command.env_remove(name);
        }
    }
    command.envs(env.iter().copied());
    command.output().expect("the ctx binary runs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An OpenAI-compatible chat-completions server that answers every request with `reply` (one
/// whole JSON completion, whatever `stream` asks: the client reads either) and keeps the bodies.
pub struct Server {
    /// Its base URL, `http://127.0.0.1:PORT/v1`.
    pub url: String,
    received: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl Server {
    pub fn start(reply: &'static str) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let url = format!("http://{}/v1", listener.local_addr().expect("bound"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                serve(stream, &kept, reply);
            }
        });
        Server { url, received }
    }

    /// The request bodies received, in order.
    pub fn bodies(&self) -> Vec<serde_json::Value> {
        self.received.lock().expect("not poisoned").clone()
    }
}

/// Answers one request on `stream` and closes it.
fn serve(stream: TcpStream, received: &Mutex<Vec<serde_json::Value>>, reply: &str) {
    let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
    let mut length = 0;
    let mut request_line = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if request_line.is_empty() {
            request_line = line.clone();
        }
        if line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let model = request["model"].clone();
    received.lock().expect("not poisoned").push(request);
    let (status, answer) = if request_line.starts_with("POST /v1/chat/completions ") {
        let answer = serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": reply }, "finish_reason": "stop" }],
        });
        ("200 OK", answer)
    } else if request_line.starts_with("POST /v1/responses ") {
        // OpenAI's Responses API (`CTX_API=responses`).
        let answer = serde_json::json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": model, "error": null,
            "output": [{ "type": "message", "role": "assistant",
                         "content": [{ "type": "output_text", "text": reply }] }],
        });
        ("200 OK", answer)
    } else {
        ("404 Not Found", serde_json::json!({ "error": { "message": request_line.trim() } }))
    };
    let answer = answer.to_string();
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
        answer.len()
    );
    let _ = stream.flush();
}
