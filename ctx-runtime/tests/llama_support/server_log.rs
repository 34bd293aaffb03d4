//! What llama.cpp really evaluated for each chat completion, read from the server's log
//! (`CTX_LLAMA_LOG`, exported by `scripts/llama-server.sh env`).
//!
//! llama-cpp-python's server reports no cache figures in its responses (`usage` has the whole
//! prompt's `prompt_tokens` only). It says what it did on stderr, which the script sends to the
//! log, when it runs verbose (its default):
//!
//! * `Llama.generate` compares the new prompt's tokens with the tokens its KV cache holds (the
//!   previous prompt and the reply generated after it), keeps the longest common prefix and
//!   prints `Llama.generate: N prefix-match hit, remaining M prompt tokens to eval`; it prints
//!   nothing when nothing matched (the whole prompt is evaluated), `… full prompt already cached`
//!   when nothing is left to evaluate, and `… prefix-match found but partial kv removal not
//!   supported` when it had to evaluate everything anyway (llama-cpp-python 0.3.36, `llama.py`).
//! * After each completion llama.cpp prints its counters (`llama_perf_context_print: prompt eval
//!   time = … / K tokens`, `eval time = … / G runs`, `total time`): `K` is the prompt tokens it
//!   decoded. `K` is an independent witness of `M`, with one known seam: llama.cpp books a decode
//!   of exactly one token as a generation step, not as prompt evaluation.
//!
//! Lines are attributed by order: a completion's lines end with its `total time` line, and the
//! server runs one completion at a time. A test reads only what was written after its own
//! [`Mark`], and checks that the number of completions there is the number it sent, so another
//! client of the same server shows up as a failure, never as a wrong figure.

use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::PathBuf;

/// The server's log file.
pub struct ServerLog {
    path: PathBuf,
}

/// A position in the log: what was written before it is not read.
#[derive(Debug, Clone, Copy)]
pub struct Mark(u64);

/// How much of its KV cache `Llama.generate` reused for a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixReuse {
    /// No common prefix (or an empty cache): the whole prompt was evaluated.
    Cold,
    /// `reused` leading tokens kept, `remaining` evaluated.
    Hit { reused: usize, remaining: usize },
    /// The whole prompt was in the cache with live logits: nothing evaluated.
    Cached,
    /// A common prefix of `found` tokens that could not be kept: the whole prompt was evaluated.
    NotRemovable { found: usize },
}

/// One chat completion as the log tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub reuse: PrefixReuse,
    /// llama.cpp's own count of prompt tokens decoded (`prompt eval time = … / K tokens`).
    pub perf_prompt_eval: usize,
    /// llama.cpp's count of single-token decodes (`eval time = … / G runs`).
    pub perf_eval_runs: usize,
}

impl Completion {
    /// The prompt tokens evaluated for a prompt of `prompt_tokens` tokens.
    pub fn evaluated(&self, prompt_tokens: usize) -> usize {
        match self.reuse {
            PrefixReuse::Cold | PrefixReuse::NotRemovable { .. } => prompt_tokens,
            PrefixReuse::Hit { remaining, .. } => remaining,
            PrefixReuse::Cached => 0,
        }
    }
}

impl ServerLog {
    /// The log named by `CTX_LLAMA_LOG`, or `None` (after saying why) when a developer runs the
    /// test without it. Under CI it must be set: `.ci/run` evaluates `scripts/llama-server.sh env`.
    pub fn from_env(test: &str) -> Option<ServerLog> {
        let Some(path) = std::env::var_os("CTX_LLAMA_LOG").filter(|p| !p.is_empty()) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CTX_LLAMA_LOG is not set under CI: `eval \"$(scripts/llama-server.sh env)\"` exports the server's log"
            );
            let _ = writeln!(
                std::io::stderr(),
                "skipped {test}: CTX_LLAMA_LOG is not set; `eval \"$(scripts/llama-server.sh env)\"` exports it"
            );
            return None;
        };
        Some(ServerLog { path: PathBuf::from(path) })
    }

    /// The whole log (to check whose it is).
    pub fn text(&self) -> String {
        std::fs::read(&self.path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_else(|e| panic!("cannot read the server's log {}: {e}", self.path.display()))
    }

    /// The end of the log now.
    pub fn mark(&self) -> Mark {
        let len = std::fs::metadata(&self.path)
            .unwrap_or_else(|e| panic!("cannot read the server's log {}: {e}", self.path.display()))
            .len();
        Mark(len)
    }

    /// The completions logged after `mark`, in order.
    pub fn completions_since(&self, mark: Mark) -> Result<Vec<Completion>, String> {
        let mut file = std::fs::File::open(&self.path).map_err(|e| format!("{}: {e}", self.path.display()))?;
        file.seek(SeekFrom::Start(mark.0)).map_err(|e| format!("{}: {e}", self.path.display()))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| format!("{}: {e}", self.path.display()))?;
        parse(&String::from_utf8_lossy(&bytes))
    }
}

/// The number before `suffix` in `line` (`"… /    34 tokens"` → 34).
fn number_before(line: &str, suffix: &str) -> Option<usize> {
    let head = line[..line.find(suffix)?].trim_end();
    let start = head.rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    head[start..].parse().ok()
}

/// The first number in `line` after `prefix`.
fn number_after(line: &str, prefix: &str) -> Option<usize> {
    let tail = line[line.find(prefix)? + prefix.len()..].trim_start();
    let end = tail.find(|c: char| !c.is_ascii_digit()).unwrap_or(tail.len());
    tail[..end].parse().ok()
}

/// Reads the completions out of a stretch of the log (see the module documentation).
pub fn parse(text: &str) -> Result<Vec<Completion>, String> {
    const GENERATE: &str = "Llama.generate:";
    const PERF: &str = "llama_perf_context_print:";
    let mut out = Vec::new();
    let mut reuse: Option<PrefixReuse> = None;
    let mut prompt_eval: Option<usize> = None;
    let mut eval_runs: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        let bad = || format!("unexpected server log line {}: {line:?}", n + 1);
        if line.starts_with(GENERATE) {
            if reuse.is_some() || prompt_eval.is_some() {
                return Err(format!("two completions interleaved in the server log at line {}: {line:?}", n + 1));
            }
            reuse = Some(if line.contains("full prompt already cached") {
                PrefixReuse::Cached
            } else if line.contains("prefix-match hit") {
                PrefixReuse::Hit {
                    reused: number_after(line, GENERATE).ok_or_else(bad)?,
                    remaining: number_after(line, "remaining").ok_or_else(bad)?,
                }
            } else if line.contains("partial kv removal not supported") {
                PrefixReuse::NotRemovable { found: number_after(line, GENERATE).ok_or_else(bad)? }
            } else {
                return Err(bad());
            });
        } else if let Some(rest) = line.strip_prefix(PERF) {
            let rest = rest.trim_start();
            if rest.starts_with("prompt eval time") {
                prompt_eval = Some(number_before(rest, " tokens").ok_or_else(bad)?);
            } else if rest.starts_with("eval time") {
                eval_runs = Some(number_before(rest, " runs").ok_or_else(bad)?);
            } else if rest.starts_with("total time") {
                let (Some(perf_prompt_eval), Some(perf_eval_runs)) = (prompt_eval, eval_runs) else {
                    return Err(format!("llama.cpp's counters incomplete before line {}: {line:?}", n + 1));
                };
                out.push(Completion { reuse: reuse.unwrap_or(PrefixReuse::Cold), perf_prompt_eval, perf_eval_runs });
                (reuse, prompt_eval, eval_runs) = (None, None, None);
            }
        }
    }
    if reuse.is_some() || prompt_eval.is_some() {
        return Err("the server log ends inside a completion: another client is using the server".to_owned());
    }
    Ok(out)
}
