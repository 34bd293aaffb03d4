//! [`OfflineModel`]: a deterministic, extractive stand-in for a chat model, for demos and tests
//! that must run without a server.
//!
//! It generates nothing. It reads the question and the context of the request (see the
//! conventions below), scores every context line by BM25 term overlap with the question (over
//! code-aware terms: identifiers split, English inflections folded), and returns lines of the
//! context:
//!
//! - **summarise**: the highest-scoring lines, within `max_tokens`, in their original order and
//!   still inside their `--- NODE ---` blocks (with `id:` and `path:`), so that a later answer can
//!   still cite them. When no line shares a term with the question, the first lines are kept.
//! - **answer**: a one-line notice that this is an offline extractive answer, then the
//!   matching lines, best first, each prefixed with `[node id]`, within `max_tokens`.
//!
//! Its [`ChatModel::model_name`] is `offline-extractive`. The output never exceeds the request's
//! `max_tokens` as counted by its [`TokenCounter`] (the rendered reply is counted, not its
//! parts). Choosing fewer lines to stay within the limit is an answer that ends where the model
//! ended it (`finish_reason` `stop`); only a reply cut at a token boundary, because not even the
//! notice or the first line fitted, ends with `length`. Usage reports
//! the exact count of the request (messages with chat overhead, plus tool schemas) and of the
//! reply.
//!
//! # Tools
//!
//! Offered tools, it behaves as a deterministic agent: while no tool result follows the last
//! user message, it replies with one call of the first tool, the question as its argument (the
//! first required string property of the schema); once results are there, or without tools, it
//! answers from the context as above, tool results included (their `<document id="…">` blocks
//! are node blocks).
//!
//! # Which task
//!
//! [`OfflineTask::Auto`] (the default) summarises when a system message contains `summar`
//! (case-insensitive: "summarise", "Summarize", "summary") and answers otherwise;
//! [`OfflineModel::with_task`] fixes the task instead.
//!
//! # Where the question and the context are
//!
//! The question is the text under the last `### User:` or `### Question:` heading (any heading
//! level; the title may continue) of the last user message, up to the next heading; without
//! such a heading, the last user message's lines outside node blocks. The context is every other
//! non-blank line of the user and tool messages, minus headings; node blocks are the
//! `--- NODE ---` format of `manage_context_budget`.

mod context;
mod select;
mod terms;
mod tools;

pub use tools::OFFLINE_CALL_ID_PREFIX;

use context::{NODE_MARKER, ParsedRequest};
use select::{fit, ranked_positive, score_lines};

use crate::chat::Role;
use crate::llm::{ChatModel, ChatRequest, ChatResponse, ModelError, Usage};
use crate::state::CONTEXT_BLOCK_SEPARATOR;
use crate::tokens::TokenError;
use crate::tokens::{Encoding, TokenCounter};

/// The offline model's name.
pub const OFFLINE_MODEL_NAME: &str = "offline-extractive";

/// The offline model's `gen_ai.provider.name` in traces: none of OpenTelemetry's well-known
/// providers applies to a model that runs in the process, so a name of ctx's own.
pub const OFFLINE_PROVIDER_NAME: &str = "ctx.offline";

/// The first line of every answer.
pub const ANSWER_NOTICE: &str =
    "Offline extractive answer (no language model): context lines that match the question, best first.";

/// The answer when no context line shares a term with the question.
pub const NO_MATCH_ANSWER: &str =
    "Offline extractive answer (no language model): no line of the context shares a term with the question.";

/// What the offline model does with a request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OfflineTask {
    /// Summarise when a system message mentions `summar`, else answer.
    #[default]
    Auto,
    /// Keep the most relevant context lines in their node blocks.
    Summarize,
    /// Quote the most relevant lines with their node ids.
    Answer,
}

/// The offline extractive model. See the [module documentation](self).
///
/// ```
/// # async fn demo() -> Result<(), ctx::llm::ModelError> {
/// use ctx::ChatMessage;
/// use ctx::llm::offline::OfflineModel;
/// use ctx::llm::{ChatModel, ChatRequest};
///
/// let model = OfflineModel::default();
/// let user = "### Context:\n--- NODE ---\nid: db/orders.sql\ntext:\nSELECT SUM(total) FROM Orders\n\n\
///             ### User:\nWhere are order totals summed?";
/// let reply = model.chat(&ChatRequest::new(vec![ChatMessage::user(user)], 64)).await?;
/// assert!(reply.content.contains("[db/orders.sql] SELECT SUM(total) FROM Orders"));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct OfflineModel {
    counter: TokenCounter,
    task: OfflineTask,
}

impl Default for OfflineModel {
    /// Counting with `cl100k_base`.
    fn default() -> Self {
        Self::new(TokenCounter::for_encoding(Encoding::Cl100kBase))
    }
}

impl OfflineModel {
    /// A model that counts with `counter` (use the counter of the pipeline's model, so that its
    /// `max_tokens` means the same thing).
    pub fn new(counter: TokenCounter) -> Self {
        OfflineModel { counter, task: OfflineTask::Auto }
    }

    /// This model with a fixed task.
    #[must_use]
    pub fn with_task(mut self, task: OfflineTask) -> Self {
        self.task = task;
        self
    }

    /// The task it performs for `request`: never [`OfflineTask::Auto`].
    pub fn task_for(&self, request: &ChatRequest) -> OfflineTask {
        match self.task {
            OfflineTask::Auto => {
                let summarise = request
                    .messages
                    .iter()
                    .any(|m| m.role == Role::System && m.content.to_lowercase().contains("summar"));
                if summarise { OfflineTask::Summarize } else { OfflineTask::Answer }
            }
            fixed => fixed,
        }
    }

    /// The reply to `request`, computed synchronously (the [`ChatModel`] methods call this).
    pub fn reply(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.reply_inner(request).map_err(|source| ModelError::Tokenizer { model: OFFLINE_MODEL_NAME.into(), source })
    }

    fn reply_inner(&self, request: &ChatRequest) -> Result<ChatResponse, TokenError> {
        let prompt_tokens = self.counter.count_request(&request.messages, &request.tools)?;
        let parsed = ParsedRequest::parse(&request.messages);
        if let Some(call) = tools::next_call(request, &parsed.question) {
            let completion_tokens = self.counter.count(&call.arguments)?;
            return Ok(ChatResponse {
                content: String::new(),
                tool_calls: vec![call],
                usage: Some(Usage::new(prompt_tokens, completion_tokens)),
                finish_reason: Some("tool_calls".into()),
                thinking: Vec::new(),
            });
        }
        let lines: Vec<&str> = parsed.lines.iter().map(|l| l.text.as_str()).collect();
        let scores = score_lines(&lines, &parsed.question);
        let fitted = match self.task_for(request) {
            OfflineTask::Summarize => self.summarize(&parsed, &scores, request.max_tokens)?,
            _ => self.answer(&parsed, &scores, request.max_tokens)?,
        };
        let completion_tokens = self.counter.count(&fitted.content)?;
        Ok(ChatResponse {
            content: fitted.content,
            tool_calls: Vec::new(),
            usage: Some(Usage::new(prompt_tokens, completion_tokens)),
            finish_reason: Some(if fitted.complete { "stop" } else { "length" }.into()),
            thinking: Vec::new(),
        })
    }

    fn summarize(
        &self,
        parsed: &ParsedRequest,
        scores: &[f32],
        max_tokens: usize,
    ) -> Result<select::Fitted, TokenError> {
        let mut ranked = ranked_positive(scores);
        if ranked.is_empty() {
            ranked = (0..parsed.lines.len()).collect();
        }
        let header = |node: Option<usize>| -> String {
            let Some(info) = node.and_then(|n| parsed.nodes.get(n)) else { return String::new() };
            let mut h = format!("{NODE_MARKER}\n");
            if let Some(id) = &info.id {
                h.push_str(&format!("id: {id}\n"));
            }
            if let Some(path) = info.path.as_ref().filter(|p| Some(*p) != info.id.as_ref()) {
                h.push_str(&format!("path: {path}\n"));
            }
            h.push_str("text:\n");
            h
        };
        let render = |picks: &[usize]| -> String {
            let mut sorted = picks.to_vec();
            sorted.sort_unstable();
            let mut blocks: Vec<String> = Vec::new();
            let mut open: Option<Option<usize>> = None;
            for i in sorted {
                let Some(line) = parsed.lines.get(i) else { continue };
                match blocks.last_mut() {
                    Some(block) if open == Some(line.node) => {
                        block.push('\n');
                        block.push_str(&line.text);
                    }
                    _ => {
                        blocks.push(format!("{}{}", header(line.node), line.text));
                        open = Some(line.node);
                    }
                }
            }
            blocks.join(CONTEXT_BLOCK_SEPARATOR)
        };
        let piece = |candidate: usize, picks: &[usize]| -> String {
            let Some(line) = parsed.lines.get(candidate) else { return String::new() };
            let node_present = picks.iter().any(|&p| parsed.lines.get(p).is_some_and(|l| l.node == line.node));
            if node_present {
                format!("\n{}", line.text)
            } else {
                format!("{CONTEXT_BLOCK_SEPARATOR}{}{}", header(line.node), line.text)
            }
        };
        fit(&self.counter, &ranked, max_tokens, render, piece)
    }

    fn answer(&self, parsed: &ParsedRequest, scores: &[f32], max_tokens: usize) -> Result<select::Fitted, TokenError> {
        let mut seen = std::collections::HashSet::new();
        let quote = |i: usize| -> Option<String> {
            let line = parsed.lines.get(i)?;
            let id = parsed.node_of(line).and_then(|n| n.id.as_deref()).unwrap_or("context");
            Some(format!("[{id}] {}", line.text.trim()))
        };
        // The same line of the same node quoted twice says nothing new.
        let ranked: Vec<usize> =
            ranked_positive(scores).into_iter().filter(|&i| quote(i).is_some_and(|q| seen.insert(q))).collect();
        if ranked.is_empty() {
            return fit(&self.counter, &[], max_tokens, |_| NO_MATCH_ANSWER.to_owned(), |_, _| String::new());
        }
        let render = |picks: &[usize]| -> String {
            let mut out = String::from(ANSWER_NOTICE);
            for q in picks.iter().filter_map(|&i| quote(i)) {
                out.push('\n');
                out.push_str(&q);
            }
            out
        };
        let piece = |candidate: usize, _: &[usize]| quote(candidate).map(|q| format!("\n{q}")).unwrap_or_default();
        fit(&self.counter, &ranked, max_tokens, render, piece)
    }
}

impl ChatModel for OfflineModel {
    fn model_name(&self) -> &str {
        OFFLINE_MODEL_NAME
    }

    /// `ctx.offline`: no provider of OpenTelemetry's conventions; the model runs in the process.
    fn provider_name(&self) -> &str {
        OFFLINE_PROVIDER_NAME
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.reply(request)
    }

    /// Hands the reply over line by line.
    async fn chat_stream(
        &self,
        request: &ChatRequest,
        on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
    ) -> Result<ChatResponse, ModelError> {
        let reply = self.reply(request)?;
        for piece in reply.content.split_inclusive('\n') {
            on_token(piece);
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests;
