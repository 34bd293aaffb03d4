//! Counting with the served model's own tokenizer: llama-cpp-python's tokenize endpoints.
//!
//! An open-weight model has its own vocabulary, and the only tokenizer that is exact for it by
//! construction is the one the server runs. [`RemoteTokenizer`] is a [`TokenizerBackend`] that
//! asks the server (`POST /extras/tokenize`, `/extras/tokenize/count`, `/extras/detokenize`);
//! [`TokenCounter`]'s count cache sits in front of it, so a text is sent once.
//!
//! **Special-token text.** These endpoints tokenize with special-token parsing on, and so does
//! the server's chat path when it tokenizes the rendered prompt: a message whose content contains
//! `<|im_end|>` gets the real special token there, in the prompt the model sees. This backend
//! therefore counts special-token text the way the server will (it cannot do otherwise: the
//! endpoints have no switch), which is what makes ctx's prediction equal the server's
//! `usage.prompt_tokens` even for such content.
//!
//! **Blocking.** [`TokenizerBackend`] is synchronous, so each uncached count is one blocking HTTP
//! call. It is made with ctx's one HTTP client (reqwest) on a scoped thread of its own, driven by
//! a small current-thread runtime there, so it is safe to call from anywhere, including a worker
//! of a tokio runtime (multi-thread or current-thread), where blocking on a runtime would panic.
//! From async code it blocks the calling worker for the round trip — about a millisecond on a
//! loopback server; wrap bulk counting of large texts in `tokio::task::spawn_blocking`.
//!
//! [`LlamaCppServer`] is the handle that checks a server serves the model, asks it for its
//! context window, and builds the counter.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::ChatTemplate;
use super::CountCache;
use super::{ChatFormat, TokenCounter, TokenizerBackend};
use crate::tokens::TokenError;

/// The limit of one call. llama-cpp-python serves one request at a time, tokenize calls
/// included, so a count waits for the generation in progress to finish.
const REMOTE_TIMEOUT: Duration = Duration::from_secs(300);

/// Largest body read from the server (the token ids of a very large text).
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// The HTTP side shared by the tokenizer and the server handle.
#[derive(Clone)]
struct Endpoint {
    root: String,
    model: String,
    api_key: Option<String>,
    /// The client, or why it could not be built (only a TLS backend that cannot start fails).
    http: Result<reqwest::Client, String>,
    id: String,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("root", &self.root)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Runs `work` to completion on a current-thread runtime of its own, on a scoped thread: never
/// on the caller's thread, which may be a worker of a tokio runtime, where starting another
/// runtime panics ("Cannot start a runtime from within a runtime"). The caller waits, as for any
/// blocking call.
fn block_on_own_thread<T: Send>(work: impl Future<Output = Result<T, String>> + Send) -> Result<T, String> {
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the HTTP runtime: {e}"))?;
            runtime.block_on(work)
        });
        worker.join().unwrap_or_else(|_| Err("the HTTP thread panicked".to_owned()))
    })
}

/// The error and its causes, `: `-joined (reqwest's own message alone says little).
fn error_chain(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl Endpoint {
    fn new(base_url: &str, model: &str, timeout: Duration) -> Self {
        // The OpenAI routes live under `/v1`, the tokenize routes at the root: accept either.
        let trimmed = base_url.trim_end_matches('/');
        let root = trimmed.strip_suffix("/v1").unwrap_or(trimmed).to_owned();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            // Each call runs on a runtime of its own, which a pooled connection would outlive.
            .pool_max_idle_per_host(0)
            // A loopback server must not be reached through a proxy from the environment.
            .no_proxy()
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {}", error_chain(&e)));
        Endpoint { id: format!("llama-cpp-python/{model}@{root}"), root, model: model.to_owned(), api_key: None, http }
    }

    fn fail(&self, reason: impl Into<String>) -> TokenError {
        TokenError::Backend { backend: self.id.clone(), reason: reason.into() }
    }

    /// Sends `body` to `path` and returns the status and the parsed JSON answer.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<(u16, Value), TokenError> {
        let url = format!("{}{}", self.root, path);
        let (status, text) =
            block_on_own_thread(self.exchange(&url, body)).map_err(|e| self.fail(format!("{method} {url}: {e}")))?;
        let value = serde_json::from_str(&text)
            .map_err(|e| self.fail(format!("{method} {url}: HTTP {status}, not JSON ({e}): {}", excerpt(&text))))?;
        Ok((status, value))
    }

    /// One request (retried once if it could not be sent) and its whole answer as text.
    async fn exchange(&self, url: &str, body: Option<&Value>) -> Result<(u16, String), String> {
        let http = self.http.as_ref().map_err(Clone::clone)?;
        let mut retried = false;
        let mut response = loop {
            let mut request = match body {
                Some(body) => {
                    http.post(url).header(reqwest::header::CONTENT_TYPE, "application/json").body(body.to_string())
                }
                None => http.get(url),
            };
            if let Some(key) = &self.api_key {
                request = request.bearer_auth(key);
            }
            match request.send().await {
                Ok(response) => break response,
                // Every call here is idempotent (tokenize, detokenize, the model list, a probe
                // the server refuses), and a connection the server closed while it sat idle
                // fails before the server sees the request: one more try.
                Err(e) if !retried && !e.is_timeout() => retried = true,
                Err(e) => return Err(error_chain(&e)),
            }
        };
        let status = response.status().as_u16();
        let mut bytes = Vec::new();
        while let Some(chunk) =
            response.chunk().await.map_err(|e| format!("reading the answer: {}", error_chain(&e)))?
        {
            if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(format!("reading the answer: larger than {MAX_BODY_BYTES} bytes"));
            }
            bytes.extend_from_slice(&chunk);
        }
        let text = String::from_utf8(bytes).map_err(|e| format!("reading the answer: not UTF-8 ({e})"))?;
        Ok((status, text))
    }

    /// A successful JSON answer of `path`, or an error naming the status and the server's words.
    fn post_ok(&self, path: &str, body: &Value) -> Result<Value, TokenError> {
        let (status, value) = self.call("POST", path, Some(body))?;
        if status != 200 {
            return Err(self.fail(format!("POST {path}: HTTP {status}: {}", excerpt(&value.to_string()))));
        }
        Ok(value)
    }
}

fn excerpt(text: &str) -> String {
    let mut end = text.len().min(300);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default().to_owned()
}

fn field<'a>(endpoint: &Endpoint, value: &'a Value, name: &str) -> Result<&'a Value, TokenError> {
    value.get(name).ok_or_else(|| endpoint.fail(format!("the answer has no `{name}`: {}", excerpt(&value.to_string()))))
}

/// The served model's tokenizer, asked over HTTP (llama-cpp-python's `/extras/tokenize*`).
#[derive(Clone, Debug)]
pub struct RemoteTokenizer {
    endpoint: Endpoint,
}

impl RemoteTokenizer {
    /// The tokenizer of `model` at `base_url` (with or without the trailing `/v1`), with a
    /// limit of 300 s per call (the server answers one request at a time, so a count may wait for
    /// a generation to finish).
    pub fn llama_cpp(base_url: &str, model: &str) -> Self {
        Self::llama_cpp_with_timeout(base_url, model, REMOTE_TIMEOUT)
    }

    /// The same with another limit per call.
    pub fn llama_cpp_with_timeout(base_url: &str, model: &str, timeout: Duration) -> Self {
        RemoteTokenizer { endpoint: Endpoint::new(base_url, model, timeout) }
    }

    /// The same tokenizer sending `key` as a bearer token (a server started with `--api_key`).
    #[must_use]
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.endpoint.api_key = Some(key.into());
        self
    }

    fn body(&self, input: &str) -> Value {
        json!({ "input": input, "model": self.endpoint.model })
    }
}

impl TokenizerBackend for RemoteTokenizer {
    fn id(&self) -> &str {
        &self.endpoint.id
    }

    fn count(&self, text: &str) -> Result<usize, TokenError> {
        let answer = self.endpoint.post_ok("/extras/tokenize/count", &self.body(text))?;
        let count = field(&self.endpoint, &answer, "count")?;
        count
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| self.endpoint.fail(format!("`count` is not a count: {count}")))
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError> {
        let answer = self.endpoint.post_ok("/extras/tokenize", &self.body(text))?;
        let tokens = field(&self.endpoint, &answer, "tokens")?;
        let ids = tokens.as_array().ok_or_else(|| self.endpoint.fail("`tokens` is not a list"))?;
        ids.iter()
            .map(|id| {
                id.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| self.endpoint.fail(format!("`{id}` is not a token id")))
            })
            .collect()
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenError> {
        // The server decodes with Python's strict UTF-8 and answers 500 for ids that end inside a
        // character; that is this method's error, which `truncate_to` steps back from.
        let body = json!({ "tokens": ids, "model": self.endpoint.model });
        let answer = self.endpoint.post_ok("/extras/detokenize", &body)?;
        let text = field(&self.endpoint, &answer, "text")?;
        text.as_str().map(str::to_owned).ok_or_else(|| self.endpoint.fail("`text` is not a string"))
    }
}

/// A llama-cpp-python server: what it serves, how large its context is, and a [`TokenCounter`]
/// that is exact for its model.
///
/// ```no_run
/// use std::sync::Arc;
/// use ctx::tokens::{ChatFormat, ChatTemplate, LlamaCppServer, RemoteTokenizer};
/// use ctx::{ChatMessage, TokenCounter};
///
/// // `scripts/llama-server.sh start` serves SmolLM2 as `smollm2` on port 18080.
/// let server = LlamaCppServer::connect("http://127.0.0.1:18080", "smollm2")?;
/// let window = server.context_window(65_536)?;
/// let counter = server.default_counter(ChatTemplate::chatml("smollm2", Some("You are a helpful assistant.")));
/// let prompt = counter.count_messages(&[ChatMessage::user("What is a context window?")])?;
/// assert!(prompt < window);
///
/// // The tokenizer alone, behind a counter of your own (here with a 1,024-entry count cache).
/// let tokenizer = RemoteTokenizer::llama_cpp("http://127.0.0.1:18080/v1", "smollm2");
/// let template = ChatTemplate::chatml("smollm2", None);
/// let counter = TokenCounter::with_backend(Arc::new(tokenizer), ChatFormat::Template(template), 1_024);
/// let question_tokens = counter.count("What is a context window?")?;
/// # Ok::<(), ctx::TokenError>(())
/// ```
#[derive(Clone, Debug)]
pub struct LlamaCppServer {
    endpoint: Endpoint,
}

impl LlamaCppServer {
    /// Connects to `base_url` (with or without `/v1`) and checks that its `/v1/models` lists
    /// `model` (the server's `--model_alias`), with a limit of 300 s per call.
    pub fn connect(base_url: &str, model: &str) -> Result<Self, TokenError> {
        Self::connect_with_timeout(base_url, model, REMOTE_TIMEOUT)
    }

    /// [`Self::connect`] with another limit per call (for this handle and the tokenizers it makes).
    pub fn connect_with_timeout(base_url: &str, model: &str, timeout: Duration) -> Result<Self, TokenError> {
        let endpoint = Endpoint::new(base_url, model, timeout);
        let (status, models) = endpoint.call("GET", "/v1/models", None)?;
        if status != 200 {
            return Err(endpoint.fail(format!("GET /v1/models: HTTP {status}: {}", excerpt(&models.to_string()))));
        }
        let ids: Vec<&str> = field(&endpoint, &models, "data")?
            .as_array()
            .map(|data| data.iter().filter_map(|m| m.get("id").and_then(Value::as_str)).collect())
            .unwrap_or_default();
        if !ids.contains(&model) {
            return Err(endpoint.fail(format!("the server serves {ids:?}, not `{model}`")));
        }
        Ok(LlamaCppServer { endpoint })
    }

    /// The model name requests must carry.
    pub fn model(&self) -> &str {
        &self.endpoint.model
    }

    /// The server's base URL for OpenAI-compatible clients (`…/v1`).
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.endpoint.root)
    }

    /// The server's context size (`--n_ctx`), in tokens: prompt plus completion must fit it.
    ///
    /// llama-cpp-python has no endpoint that reports it, but it refuses a prompt that does not
    /// fit before evaluating anything, and its refusal states the size ("This model's maximum
    /// context length is 2048 tokens"). This sends a text completion whose prompt has at least
    /// `ceiling` tokens and reads the size from the refusal; the prompt is counted by the
    /// server's tokenizer first, so "at least" is exact. A server whose context is larger than
    /// `ceiling` would evaluate the whole prompt: choose a ceiling above any context the server
    /// may have (the tests use 65,536 for a 2,048 server; the probe takes a fraction of a second).
    pub fn context_window(&self, ceiling: usize) -> Result<usize, TokenError> {
        let tokenizer = RemoteTokenizer { endpoint: self.endpoint.clone() };
        // A digit is one token in most open vocabularies and a few bytes in the others; grow
        // the text until the server's tokenizer says it is long enough.
        let mut prompt = "1".repeat(ceiling.max(1));
        let mut doublings = 0;
        while tokenizer.count(&prompt)? < ceiling {
            doublings += 1;
            if doublings > 8 {
                return Err(self.endpoint.fail("the server's tokenizer does not count a growing text as growing"));
            }
            prompt = prompt.repeat(2);
        }
        let body = json!({ "model": self.endpoint.model, "prompt": prompt, "max_tokens": 1 });
        let (status, answer) = self.endpoint.call("POST", "/v1/completions", Some(&body))?;
        let message = answer.pointer("/error/message").and_then(Value::as_str).unwrap_or_default();
        if status == 200 {
            return Err(self.endpoint.fail(format!(
                "the server accepted a prompt of {ceiling} tokens: its context is larger than the probe's ceiling"
            )));
        }
        parse_window(message).ok_or_else(|| {
            self.endpoint.fail(format!(
                "the server refused the context probe without stating its context size (HTTP {status}): {}",
                excerpt(&answer.to_string())
            ))
        })
    }

    /// A tokenizer for this server's model.
    pub fn tokenizer(&self) -> RemoteTokenizer {
        RemoteTokenizer { endpoint: self.endpoint.clone() }
    }

    /// A counter that is exact for this server: its tokenizer behind a count cache of
    /// `cache_entries` entries, and `template` (the model's chat template) for chat overhead.
    pub fn counter(&self, template: ChatTemplate, cache_entries: usize) -> TokenCounter {
        TokenCounter::with_backend(Arc::new(self.tokenizer()), ChatFormat::Template(template), cache_entries)
    }

    /// [`Self::counter`] with the default cache size.
    pub fn default_counter(&self, template: ChatTemplate) -> TokenCounter {
        self.counter(template, CountCache::DEFAULT_ENTRIES)
    }
}

/// The context size in a llama-cpp-python refusal ("maximum context length is N tokens").
fn parse_window(message: &str) -> Option<usize> {
    const MARK: &str = "maximum context length is ";
    let start = message.find(MARK)? + MARK.len();
    let digits: String = message.get(start..)?.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_read_from_both_refusal_wordings() {
        let chat = "This model's maximum context length is 2048 tokens. However, you requested 3031 tokens \
                    (3030 in the messages, 1 in the completion).";
        let text = "This model's maximum context length is 4096 tokens, however you requested 131073 tokens";
        assert_eq!(parse_window(chat), Some(2048));
        assert_eq!(parse_window(text), Some(4096));
        assert_eq!(parse_window("context_length_exceeded"), None);
        assert_eq!(parse_window("maximum context length is  tokens"), None);
    }

    #[test]
    fn base_urls_with_and_without_v1_reach_the_same_root() {
        for url in ["http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1/", "http://127.0.0.1:9", "http://127.0.0.1:9/"] {
            assert_eq!(Endpoint::new(url, "m", Duration::from_secs(1)).root, "http://127.0.0.1:9", "{url}");
        }
    }

    #[test]
    fn an_unreachable_server_is_a_backend_error_naming_it() {
        // Port 9 (discard) is closed on loopback: the connection is refused at once.
        let t = RemoteTokenizer::llama_cpp_with_timeout("http://127.0.0.1:9/v1", "m", Duration::from_secs(5));
        let err = t.count("hello").unwrap_err();
        assert!(matches!(err, TokenError::Backend { .. }));
        assert!(err.to_string().contains("127.0.0.1:9"), "{err}");
        assert!(LlamaCppServer::connect("http://127.0.0.1:9", "m").is_err());
    }

    /// A one-connection-at-a-time HTTP server on a plain thread (no runtime) that answers every
    /// request with `{"count": 7}` and records what it was sent.
    fn count_server() -> (String, std::sync::mpsc::Receiver<String>) {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let (sent, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut head = String::new();
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                    head.push_str(&line);
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let _ = sent.send(format!("{head}\r\n{}", String::from_utf8_lossy(&body)));
                let answer = r#"{"count": 7}"#;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        (url, received)
    }

    #[test]
    fn counts_from_a_plain_thread_with_the_key_and_the_model() {
        let (url, received) = count_server();
        let t = RemoteTokenizer::llama_cpp_with_timeout(&url, "m", Duration::from_secs(10)).with_api_key("sk-1");
        assert_eq!(t.count("hello").expect("count"), 7);
        let request = received.recv().expect("a request");
        assert!(request.starts_with("POST /extras/tokenize/count HTTP/1.1"), "{request}");
        assert!(request.to_ascii_lowercase().contains("authorization: bearer sk-1"), "{request}");
        assert!(request.ends_with(r#"{"input":"hello","model":"m"}"#), "{request}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn counts_from_inside_a_multi_thread_runtime() {
        let (url, _received) = count_server();
        let t = RemoteTokenizer::llama_cpp_with_timeout(&url, "m", Duration::from_secs(10));
        assert_eq!(t.count("hello").expect("count"), 7);
        assert_eq!(t.count("hello again").expect("count"), 7);
        drop(t); // dropping the client on a runtime thread is fine too
    }

    #[tokio::test(flavor = "current_thread")]
    async fn counts_from_inside_a_current_thread_runtime() {
        let (url, _received) = count_server();
        let counter = TokenCounter::with_backend(
            Arc::new(RemoteTokenizer::llama_cpp_with_timeout(&url, "m", Duration::from_secs(10))),
            ChatFormat::openai_gpt4(),
            16,
        );
        assert_eq!(counter.count("hello").expect("count"), 7);
        tokio::task::yield_now().await;
        assert_eq!(counter.count("hello").expect("cached"), 7);
    }

    #[test]
    fn the_api_key_never_shows_in_debug() {
        let t = RemoteTokenizer::llama_cpp("http://127.0.0.1:9", "m").with_api_key("sk-very-secret");
        assert!(!format!("{t:?}").contains("very-secret"));
    }
}
