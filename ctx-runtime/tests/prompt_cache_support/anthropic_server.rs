//! A scripted Anthropic Messages API on 127.0.0.1 that applies Anthropic's prompt-caching rules
//! to the request body it receives and reports the usage as the API does.
//!
//! The rules, as Anthropic's prompt-caching page documents them
//! (https://platform.claude.com/docs/en/build-with-claude/prompt-caching; the same text in the
//! stored copies at docs.anthropic.com/ko/docs/build-with-claude/prompt-caching and
//! docs.claude.com/ja/docs/build-with-claude/prompt-caching, read 2026-11-26):
//!
//! - The prompt is one sequence of blocks in the order tools → system → messages; a
//!   `cache_control` breakpoint names the prefix up to and including its block.
//! - On a request, each breakpoint's prefix is looked up: the breakpoint's own block boundary,
//!   then the earlier block boundaries, up to 20 blocks before it ([`LOOKBACK_BLOCKS`]), for a
//!   prefix written before. The longest prefix found is read from the cache
//!   (`cache_read_input_tokens`, billed at 0.1× input).
//! - Every breakpoint's prefix not found is written (`cache_creation_input_tokens`: the tokens
//!   from the end of the read up to the last breakpoint written, billed at 1.25× input for the
//!   default 5-minute TTL), and can be read by a later request with the identical prefix.
//! - A prefix shorter than the model's minimum (1,024 tokens for Claude Sonnet 4.5,
//!   [`MIN_CACHEABLE_TOKENS`]) is neither written nor read; a request with more than four
//!   breakpoints is refused (`invalid_request_error`).
//! - `usage.input_tokens` is the rest: the tokens after the cached part (neither read nor
//!   written); the three add up to the prompt.
//!
//! What is not modelled: the TTL (every request of a measured conversation follows the one
//! before within seconds, far inside five minutes), and Anthropic's own tokenizer, which is not
//! public: a block's tokens are ctx's `o200k_base` count of its content (a text block's text, a
//! tool definition's name, description and schema, a `tool_use` block's name and input, a
//! `tool_result`'s content), for both policies alike; message framing is not counted. Prefixes are
//! compared exactly (every block's JSON without its `cache_control`, with its section, message and
//! role), not by hash.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use ctx_runtime::TokenCounter;
use serde_json::{Value, json};

/// The smallest prefix Anthropic caches for Claude Sonnet 4.5.
pub const MIN_CACHEABLE_TOKENS: usize = 1_024;
/// How many block boundaries before a breakpoint the lookup also checks.
pub const LOOKBACK_BLOCKS: usize = 20;
/// The most breakpoints a request may carry.
pub const MAX_BREAKPOINTS: usize = 4;

/// One block of the prompt, in cache order.
#[derive(Debug, Clone)]
pub struct Block {
    /// What identifies the block in a prefix: section, message index, role and the block's JSON
    /// without its `cache_control`.
    pub key: String,
    /// Its tokens.
    pub tokens: usize,
    /// Whether it carries a `cache_control` breakpoint.
    pub breakpoint: bool,
}

/// How one request's prompt was billed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accounting {
    /// Every token of the prompt.
    pub prompt_tokens: usize,
    /// `input_tokens`: neither read from nor written to the cache.
    pub input_tokens: usize,
    /// `cache_read_input_tokens`.
    pub cache_read: usize,
    /// `cache_creation_input_tokens`.
    pub cache_write: usize,
    /// How many breakpoints the request carried.
    pub breakpoints: usize,
}

/// The prompt cache: every prefix written, compared exactly (as the sequence of its blocks,
/// each block interned as a number).
#[derive(Debug, Default)]
pub struct PromptCache {
    ids: HashMap<String, u32>,
    written: HashSet<Vec<u32>>,
}

impl PromptCache {
    /// Bills `blocks` under the rules of the module documentation and writes the prefixes it
    /// creates. The three parts are computed apart, so that their sum is a check, not a given.
    pub fn account(&mut self, blocks: &[Block]) -> Accounting {
        let mut ids = Vec::with_capacity(blocks.len());
        for block in blocks {
            let next = u32::try_from(self.ids.len()).expect("fewer than 2^32 distinct blocks");
            ids.push(*self.ids.entry(block.key.clone()).or_insert(next));
        }
        let breakpoints: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].breakpoint).collect();
        let tokens = |range: std::ops::Range<usize>| blocks[range].iter().map(|b| b.tokens).sum::<usize>();
        let upto = |end: usize| tokens(0..end + 1);
        // The longest prefix written before, found from any breakpoint within its lookback.
        let mut read_end: Option<usize> = None;
        for &b in &breakpoints {
            let found = (b.saturating_sub(LOOKBACK_BLOCKS)..=b).rev().find(|&end| self.written.contains(&ids[..=end]));
            read_end = read_end.max(found);
        }
        // Every breakpoint beyond the read whose prefix is long enough is written.
        let written: Vec<usize> = breakpoints
            .iter()
            .copied()
            .filter(|&b| read_end.is_none_or(|r| b > r) && upto(b) >= MIN_CACHEABLE_TOKENS)
            .collect();
        let write_end = written.last().copied();
        let after = |end: Option<usize>| end.map_or(0, |e| e + 1);
        let cache_read = read_end.map_or(0, upto);
        let cache_write = write_end.map_or(0, |w| tokens(after(read_end)..w + 1));
        let input_tokens = tokens(after(read_end.max(write_end))..blocks.len());
        for &w in &written {
            self.written.insert(ids[..=w].to_vec());
        }
        Accounting {
            prompt_tokens: tokens(0..blocks.len()),
            input_tokens,
            cache_read,
            cache_write,
            breakpoints: breakpoints.len(),
        }
    }
}

/// The text of a block that the model reads, whose tokens are the block's.
fn block_text(block: &Value) -> String {
    let field = |name: &str| block.get(name).map_or(String::new(), |v| v.as_str().map_or(v.to_string(), str::to_owned));
    match block.get("type").and_then(Value::as_str) {
        Some("text") => field("text"),
        Some("tool_use") => format!("{}{}", field("name"), field("input")),
        Some("tool_result") => match block.get("content") {
            Some(Value::Array(parts)) => parts.iter().map(block_text).collect(),
            _ => field("content"),
        },
        // A tool definition.
        None if block.get("input_schema").is_some() => {
            format!("{}{}{}", field("name"), field("description"), field("input_schema"))
        }
        _ => block.to_string(),
    }
}

/// The blocks of a Messages request body in cache order, or why it is not one.
pub fn blocks(body: &Value, counter: &TokenCounter) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    let mut push = |section: String, block: &Value| -> Result<(), String> {
        let mut bare = block.clone();
        let breakpoint = bare.as_object_mut().and_then(|o| o.remove("cache_control")).is_some();
        let tokens = counter.count(&block_text(block)).map_err(|e| e.to_string())?;
        out.push(Block { key: format!("{section}{bare}"), tokens, breakpoint });
        Ok(())
    };
    for tool in body.get("tools").and_then(Value::as_array).into_iter().flatten() {
        push("tools/".into(), tool)?;
    }
    match body.get("system") {
        None => {}
        Some(Value::String(text)) => push("system/".into(), &json!({"type": "text", "text": text}))?,
        Some(Value::Array(parts)) => {
            for part in parts {
                push("system/".into(), part)?;
            }
        }
        Some(other) => return Err(format!("`system` is neither a string nor blocks: {other}")),
    }
    let messages = body.get("messages").and_then(Value::as_array).ok_or("the body has no `messages`")?;
    for (i, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).ok_or(format!("message {i} has no `role`"))?;
        match message.get("content") {
            Some(Value::String(text)) => push(format!("messages/{i}/{role}/"), &json!({"type": "text", "text": text}))?,
            Some(Value::Array(parts)) => {
                for part in parts {
                    push(format!("messages/{i}/{role}/"), part)?;
                }
            }
            _ => return Err(format!("message {i} has no `content`")),
        }
    }
    Ok(out)
}

/// What the server did with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// The billing it reported.
    pub accounting: Accounting,
    /// `max_tokens` of the request.
    pub max_tokens: usize,
    /// `usage.output_tokens` of the reply.
    pub output_tokens: usize,
}

struct Shared {
    counter: TokenCounter,
    cache: Mutex<PromptCache>,
    served: Mutex<Vec<Served>>,
}

/// The running server; it stops with the runtime that started it.
pub struct ScriptedAnthropic {
    /// `http://127.0.0.1:<port>/v1`.
    pub base_url: String,
    shared: Arc<Shared>,
}

impl ScriptedAnthropic {
    /// Starts a server with an empty cache, counting with `counter`.
    pub async fn start(counter: TokenCounter) -> Self {
        let shared =
            Arc::new(Shared { counter, cache: Mutex::new(PromptCache::default()), served: Mutex::new(Vec::new()) });
        let app = Router::new().route("/v1/messages", post(messages)).with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        ScriptedAnthropic { base_url: format!("http://{addr}/v1"), shared }
    }

    /// Every request served, in order.
    pub fn served(&self) -> Vec<Served> {
        self.shared.served.lock().expect("lock").clone()
    }
}

fn invalid(message: String) -> Response {
    let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}});
    (StatusCode::BAD_REQUEST, [("content-type", "application/json")], body.to_string()).into_response()
}

/// The latest question (a user text block) and whether the prompt ends with a tool result.
fn turn_of(body: &Value) -> (String, bool) {
    let messages = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    let blocks_of = |m: &Value| m.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    let question = messages
        .iter()
        .rev()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .flat_map(|m| blocks_of(m).into_iter().rev())
        .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .and_then(|b| b.get("text").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    let searched = messages
        .last()
        .and_then(|m| blocks_of(m).last().cloned())
        .is_some_and(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
    (question, searched)
}

async fn messages(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return invalid(format!("the body is not JSON: {e}")),
    };
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        return invalid("this scripted server answers whole replies only".into());
    }
    let blocks = match blocks(&body, &shared.counter) {
        Ok(b) => b,
        Err(e) => return invalid(e),
    };
    let found = blocks.iter().filter(|b| b.breakpoint).count();
    if found > MAX_BREAKPOINTS {
        return invalid(format!(
            "A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
        ));
    }
    let accounting = shared.cache.lock().expect("lock").account(&blocks);
    let mut served = shared.served.lock().expect("lock");
    let number = served.len() + 1;
    let (question, searched) = turn_of(&body);
    let offers_tools = body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
    let (content, stop_reason, output) = if searched || !offers_tools {
        let text = super::answer(&question, number);
        (json!([{"type": "text", "text": text}]), "end_turn", text)
    } else {
        let arguments = super::search_arguments(&question);
        let input: Value = serde_json::from_str(&arguments).unwrap_or(Value::Null);
        let call = json!({"type": "tool_use", "id": format!("toolu_{number}"), "name": "search_docs", "input": input});
        (json!([call]), "tool_use", arguments)
    };
    let output_tokens = shared.counter.count(&output).unwrap_or(0);
    let max_tokens = body.get("max_tokens").and_then(Value::as_u64).unwrap_or(0) as usize;
    served.push(Served { accounting, max_tokens, output_tokens });
    let reply = json!({
        "id": format!("msg_{number}"), "type": "message", "role": "assistant", "model": body["model"],
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {
            "input_tokens": accounting.input_tokens,
            "cache_creation_input_tokens": accounting.cache_write,
            "cache_read_input_tokens": accounting.cache_read,
            "output_tokens": output_tokens
        }
    });
    (StatusCode::OK, [("content-type", "application/json")], reply.to_string()).into_response()
}
