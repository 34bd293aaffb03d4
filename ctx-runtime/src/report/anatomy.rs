//! The anatomy of one model request: its prompt cut into parts (the system prompt, the history
//! message by message, the context node by node, the question, the tool calls of an agent turn,
//! the tool schemas, the chat format's reply priming), each with its exact token count, so that
//! the parts add up to exactly the count the guard took before the request was sent.
//!
//! How a count is cut, and why the parts still add up:
//!
//! * A message's part is its cost in the request ([`TokenCounter::message_costs`]): its text and
//!   its chat framing. The costs plus the reply priming are the messages' count, by the chat
//!   format's own definition; the tool schemas are what the whole request adds to that.
//! * The user message is cut where its `user_parts` meet, and its context where its blocks meet,
//!   by counting the growing prefix ([`CountedText`], one pass): a piece gets what the text
//!   grows by when it is appended. BPE can merge across a seam, so a prefix can count one token
//!   more than a longer one; the cumulative counts are first made non-decreasing from the end
//!   (each replaced by the least count of any longer prefix), which moves such a token to the
//!   piece after the seam and keeps every part non-negative and the sum exact. The message's
//!   framing goes with the question.
//! * When a count cannot be cut (a server counts the request, or a template whose parts do not
//!   add up), the request is one [`PartKind::Unsplit`] part: still exact, never re-estimated.
//!
//! Cutting costs counting again, so it is not done on the request's path: a step report holds a
//! [`LazyAnatomy`], the request as sent (its messages are moved there once the reply is in, not
//! copied) and cut the first time a report, a page or a serialiser reads it. A trace that records
//! the parts on the request's span cuts it before the request is sent, and only when a subscriber
//! takes the span.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use crate::chat::{ChatMessage, Role, ToolSchema};
use crate::state::CONTEXT_BLOCK_SEPARATOR;
use crate::tokens::{ChatFormat, CountedText, Counting, TokenCounter};

/// What a part of a request (or of its window) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PartKind {
    /// The system prompt (`prompt_key`).
    System,
    /// The tool schemas offered (an `agent` request).
    Tools,
    /// One history message, or a tool call with its results.
    History,
    /// One block of the context (a node, a divider, a summary), with its share of the template.
    Context,
    /// The rest of the user message: the question and the other `user_parts`.
    Question,
    /// Tool calls and their results made earlier in the same agent turn.
    ToolTurn,
    /// The chat format's tokens that belong to no message (the reply priming).
    ChatFormat,
    /// A request counted whole, without a breakdown.
    Unsplit,
    /// The output reserved for the reply (`max_tokens` sent).
    Output,
    /// The safety margin kept free.
    Margin,
    /// The window left unused.
    Free,
}

impl PartKind {
    /// The name shown in reports and used as the part's CSS class and trace attribute.
    pub fn name(self) -> &'static str {
        match self {
            PartKind::System => "system",
            PartKind::Tools => "tools",
            PartKind::History => "history",
            PartKind::Context => "context",
            PartKind::Question => "question",
            PartKind::ToolTurn => "tool_turn",
            PartKind::ChatFormat => "chat_format",
            PartKind::Unsplit => "request",
            PartKind::Output => "output",
            PartKind::Margin => "margin",
            PartKind::Free => "free",
        }
    }
}

/// One part of a request, with its exact token count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RequestPart {
    /// What it is.
    pub kind: PartKind,
    /// A short label (`system prompt`, `user message 3`, `node usp_Total`, …).
    pub label: String,
    /// Its exact token count (see the module documentation).
    pub tokens: usize,
    /// The node ids its text holds (context parts framed by `--- NODE ---`).
    pub nodes: Vec<String>,
    /// The first characters of its text, for a reader to recognise it.
    pub preview: String,
}

ctx_spec::setters!(RequestPart { nodes: Vec<String>, preview: String });

impl RequestPart {
    /// A part without nodes or preview.
    pub fn new(kind: PartKind, label: impl Into<String>, tokens: usize) -> Self {
        RequestPart { kind, label: label.into(), tokens, nodes: Vec::new(), preview: String::new() }
    }

    fn with_preview(mut self, text: &str) -> Self {
        self.preview = preview(text);
        self
    }
}

/// A request's prompt cut into parts, and what else its window holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RequestAnatomy {
    /// The prompt's parts, in the order the model reads them; their tokens add up to
    /// [`Self::prompt_tokens`].
    pub parts: Vec<RequestPart>,
    /// The exact prompt count the guard took (messages, tools and chat format).
    pub prompt_tokens: usize,
    /// The output limit sent.
    pub max_output_tokens: usize,
    /// The settings' safety margin.
    pub safety_margin_tokens: usize,
    /// The model's window.
    pub context_window: usize,
}

ctx_spec::setters!(RequestAnatomy { parts: Vec<RequestPart> });

impl RequestAnatomy {
    /// A request shown as one part (no breakdown available).
    pub fn unsplit(
        reason: &str,
        prompt_tokens: usize,
        max_output_tokens: usize,
        safety_margin_tokens: usize,
        context_window: usize,
    ) -> Self {
        RequestAnatomy {
            parts: vec![RequestPart::new(PartKind::Unsplit, format!("whole request ({reason})"), prompt_tokens)],
            prompt_tokens,
            max_output_tokens,
            safety_margin_tokens,
            context_window,
        }
    }

    /// The window's figures of a request whose prompt is not cut into parts (yet).
    pub(crate) fn frame(
        prompt_tokens: usize,
        max_output_tokens: usize,
        safety_margin_tokens: usize,
        context_window: usize,
    ) -> Self {
        RequestAnatomy { parts: Vec::new(), prompt_tokens, max_output_tokens, safety_margin_tokens, context_window }
    }

    /// The sum of the parts' tokens: always [`Self::prompt_tokens`].
    pub fn parts_total(&self) -> usize {
        self.parts.iter().map(|p| p.tokens).sum()
    }

    /// The tokens of the parts of `kind`.
    pub fn tokens_of(&self, kind: PartKind) -> usize {
        self.parts.iter().filter(|p| p.kind == kind).map(|p| p.tokens).sum()
    }

    /// The margin as it lies in the window: the settings' margin, or what the window leaves
    /// after the prompt and the output when that is less.
    pub fn margin_in_window(&self) -> usize {
        self.safety_margin_tokens
            .min(self.context_window.saturating_sub(self.prompt_tokens.saturating_add(self.max_output_tokens)))
    }

    /// The window left after the prompt, the output and the margin.
    pub fn free_tokens(&self) -> usize {
        self.context_window.saturating_sub(
            self.prompt_tokens.saturating_add(self.max_output_tokens).saturating_add(self.margin_in_window()),
        )
    }

    /// The whole window: the prompt's parts, then the reserved output, the margin and the free
    /// space. Their tokens add up to the window whenever the request fits it (every request the
    /// guard let through).
    pub fn window_parts(&self) -> Vec<RequestPart> {
        let mut parts = self.parts.clone();
        parts.push(RequestPart::new(PartKind::Output, "reserved output", self.max_output_tokens));
        parts.push(RequestPart::new(PartKind::Margin, "safety margin", self.margin_in_window()));
        parts.push(RequestPart::new(PartKind::Free, "free", self.free_tokens()));
        parts
    }
}

/// A request's [`RequestAnatomy`], cut the first time it is read (see the module documentation).
/// It reads as the anatomy itself (`Deref`), compares and serialises as it, and clones cheaply
/// (the clones share the request and the cut).
#[derive(Clone)]
pub struct LazyAnatomy(Arc<Lazy>);

struct Lazy {
    cut: OnceLock<RequestAnatomy>,
    /// The request, until it is cut (`None` for an anatomy cut when it was made).
    source: Option<AnatomySource>,
}

/// What cutting a request needs: the counter and the request as it was sent.
pub(crate) struct AnatomySource {
    pub(crate) counter: TokenCounter,
    pub(crate) messages: Vec<ChatMessage>,
    pub(crate) tools: Vec<ToolSchema>,
    /// History messages sent.
    pub(crate) history: usize,
    pub(crate) segments: Vec<UserSegment>,
    /// The prompt's exact count, the output limit sent, the margin and the window.
    pub(crate) figures: (usize, usize, usize, usize),
}

impl AnatomySource {
    fn measure(&self) -> RequestAnatomy {
        let layout = Layout { history: self.history, user: &self.segments };
        measure(&self.counter, &self.messages, &self.tools, &layout, self.figures)
    }
}

impl LazyAnatomy {
    /// An anatomy cut from `source` when first read.
    pub(crate) fn new(source: AnatomySource) -> Self {
        LazyAnatomy(Arc::new(Lazy { cut: OnceLock::new(), source: Some(source) }))
    }

    /// An anatomy already cut.
    pub fn ready(anatomy: RequestAnatomy) -> Self {
        LazyAnatomy(Arc::new(Lazy { cut: OnceLock::from(anatomy), source: None }))
    }

    /// The anatomy, cut now if it was not yet.
    pub fn get(&self) -> &RequestAnatomy {
        self.0.cut.get_or_init(|| match &self.0.source {
            Some(source) => source.measure(),
            // `ready` fills the cell; a lazy one always has its source.
            None => RequestAnatomy::frame(0, 0, 0, 0),
        })
    }

    /// Whether the request was cut already (by a trace, or an earlier read).
    pub fn is_cut(&self) -> bool {
        self.0.cut.get().is_some()
    }
}

impl Deref for LazyAnatomy {
    type Target = RequestAnatomy;

    fn deref(&self) -> &RequestAnatomy {
        self.get()
    }
}

impl fmt::Debug for LazyAnatomy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

impl PartialEq for LazyAnatomy {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.get() == other.get()
    }
}

impl Eq for LazyAnatomy {}

impl Serialize for LazyAnatomy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(serializer)
    }
}

impl From<RequestAnatomy> for LazyAnatomy {
    fn from(anatomy: RequestAnatomy) -> Self {
        LazyAnatomy::ready(anatomy)
    }
}

/// One `user_parts` entry as rendered into the user message: the template's text around `{}` and
/// the lengths of the value's pieces, which the message itself holds (nothing is copied).
#[derive(Debug, Clone)]
pub(crate) struct UserSegment {
    /// The source (`context_blocks`, `user_question`, a variable).
    pub(crate) source: String,
    /// The template's text before `{}`.
    pub(crate) before: String,
    /// The template's text after `{}`.
    pub(crate) after: String,
    /// The byte lengths of the value's pieces a reader tells apart: the context's blocks (joined
    /// by [`CONTEXT_BLOCK_SEPARATOR`]), or the whole value.
    pub(crate) pieces: Vec<usize>,
}

impl UserSegment {
    /// The segment of `template` filled with `value`; `blocks` when the value is the context.
    pub(crate) fn new(source: &str, template: &str, value: &str, blocks: Option<&[String]>) -> Self {
        let (before, after) = template.split_once("{}").unwrap_or((template, ""));
        let pieces = match blocks {
            Some(blocks) if !blocks.is_empty() => blocks.iter().map(String::len).collect(),
            _ => vec![value.len()],
        };
        UserSegment { source: source.to_owned(), before: before.to_owned(), after: after.to_owned(), pieces }
    }
}

/// Where the parts of a request sit in its messages.
pub(crate) struct Layout<'a> {
    /// History messages sent, right after the system prompt.
    pub(crate) history: usize,
    /// The user message's segments, in order.
    pub(crate) user: &'a [UserSegment],
}

/// Cuts the request `messages` + `tools` (laid out as [`Layout`] says: system, history, user
/// message, then an agent turn's tool calls) into parts adding up to `prompt_tokens`, the guard's
/// count. Falls back to one unsplit part when the count cannot be cut exactly.
pub(crate) fn measure(
    counter: &TokenCounter,
    messages: &[ChatMessage],
    tools: &[ToolSchema],
    layout: &Layout<'_>,
    (prompt_tokens, max_output_tokens, safety_margin_tokens, context_window): (usize, usize, usize, usize),
) -> RequestAnatomy {
    let whole = |reason: &str| {
        RequestAnatomy::unsplit(reason, prompt_tokens, max_output_tokens, safety_margin_tokens, context_window)
    };
    // A server that counts whole requests would be asked once per message to cut one.
    if matches!(counter.format(), ChatFormat::Anthropic(_)) && counter.format().counting() == Counting::Exact {
        return whole("counted by the server's count_tokens endpoint");
    }
    match cut(counter, messages, tools, layout, prompt_tokens) {
        Some(parts) => RequestAnatomy { parts, prompt_tokens, max_output_tokens, safety_margin_tokens, context_window },
        None => whole("the chat format's count does not split by message"),
    }
}

fn cut(
    counter: &TokenCounter,
    messages: &[ChatMessage],
    tools: &[ToolSchema],
    layout: &Layout<'_>,
    prompt_tokens: usize,
) -> Option<Vec<RequestPart>> {
    let user_at = 1 + layout.history;
    let system = messages.first().filter(|m| m.role == Role::System)?;
    let user = messages.get(user_at).filter(|m| m.role == Role::User)?;
    let costs = counter.message_costs(messages).ok()?;
    let messages_total = counter.count_messages(messages).ok()?;
    let priming = messages_total.checked_sub(costs.iter().sum())?;
    let tools_tokens = prompt_tokens.checked_sub(messages_total)?;

    let mut parts = vec![RequestPart::new(PartKind::System, "system prompt", costs[0]).with_preview(&system.content)];
    if !tools.is_empty() {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        parts.push(RequestPart::new(PartKind::Tools, format!("tool schemas ({})", names.join(", ")), tools_tokens));
    } else if tools_tokens != 0 {
        return None;
    }
    parts.extend(blocks(&messages[1..user_at], &costs[1..user_at], PartKind::History, 1));
    parts.extend(user_parts(counter, &user.content, costs[user_at], layout.user)?);
    parts.extend(blocks(&messages[user_at + 1..], &costs[user_at + 1..], PartKind::ToolTurn, 1));
    if priming > 0 {
        parts.push(RequestPart::new(PartKind::ChatFormat, "reply priming", priming));
    }
    (parts.iter().map(|p| p.tokens).sum::<usize>() == prompt_tokens).then_some(parts)
}

/// Messages grouped for a reader: an assistant message that calls tools together with the
/// results that answer it, every other message alone.
fn blocks(messages: &[ChatMessage], costs: &[usize], kind: PartKind, first_number: usize) -> Vec<RequestPart> {
    let mut parts: Vec<RequestPart> = Vec::new();
    let mut open_call = false;
    for (i, (m, cost)) in messages.iter().zip(costs).enumerate() {
        if m.role == Role::Tool
            && open_call
            && let Some(last) = parts.last_mut()
        {
            last.tokens += cost;
            last.label = format!("{} + result", last.label);
            continue;
        }
        open_call = !m.tool_calls.is_empty();
        let label = if open_call {
            let names: Vec<&str> = m.tool_calls.iter().map(|c| c.name.as_str()).collect();
            format!("tool call {}", names.join(", "))
        } else {
            format!("{} message {}", m.role.as_str(), first_number + i)
        };
        let text = if open_call {
            m.tool_calls.iter().map(|c| c.arguments.as_str()).collect::<Vec<_>>().join(" ")
        } else {
            m.content.clone()
        };
        parts.push(RequestPart::new(kind, label, *cost).with_preview(&text));
    }
    parts
}

/// The user message cut at its segments' seams (see the module documentation). `None` when the
/// segments do not spell the message or its cost is less than its text's count.
fn user_parts(
    counter: &TokenCounter,
    content: &str,
    cost: usize,
    segments: &[UserSegment],
) -> Option<Vec<RequestPart>> {
    // Each piece's text is a slice of the message: its template text or separator, the piece,
    // and after the last piece the template's text after `{}`. `None` when they do not spell it.
    let mut pieces: Vec<(RequestPart, &str)> = Vec::new();
    let mut at = 0usize;
    let expect = |at: usize, text: &str| content.get(at..)?.starts_with(text).then_some(at + text.len());
    for s in segments {
        let context = s.source == "context_blocks";
        let n = s.pieces.len();
        for (i, &len) in s.pieces.iter().enumerate() {
            let start = at;
            at = expect(at, if i == 0 { &s.before } else { CONTEXT_BLOCK_SEPARATOR })?;
            let piece = content.get(at..at.checked_add(len)?)?;
            at += len;
            if i + 1 == n {
                at = expect(at, &s.after)?;
            }
            let text = &content[start..at];
            let part = if context {
                let nodes = node_ids(piece);
                let label = match (nodes.as_slice(), piece.is_empty()) {
                    (_, true) => "context (empty)".to_owned(),
                    ([], _) => format!("context block {}", i + 1),
                    ([one], _) => format!("node {one}"),
                    (many, _) => format!("block {} ({} nodes)", i + 1, many.len()),
                };
                RequestPart { nodes, ..RequestPart::new(PartKind::Context, label, 0).with_preview(piece) }
            } else {
                RequestPart::new(PartKind::Question, s.source.clone(), 0).with_preview(piece)
            };
            pieces.push((part, text));
        }
    }
    if at != content.len() {
        return None;
    }
    let mut text = CountedText::new(counter);
    let mut cumulative = Vec::with_capacity(pieces.len());
    for &(_, piece) in &pieces {
        cumulative.push(text.push_str(piece).ok()?);
    }
    let framing = cost.checked_sub(text.tokens())?;
    // Non-decreasing from the end: a token merged across a seam goes to the piece after it.
    let mut least = usize::MAX;
    for c in cumulative.iter_mut().rev() {
        least = least.min(*c);
        *c = least;
    }
    let mut before = 0;
    let mut parts: Vec<RequestPart> = pieces
        .into_iter()
        .zip(cumulative)
        .map(|((part, _), c)| {
            let tokens = c - before;
            before = c;
            RequestPart { tokens, ..part }
        })
        .collect();
    let framed = parts.iter().rposition(|p| p.kind == PartKind::Question).or(parts.len().checked_sub(1));
    match framed {
        Some(i) => parts[i].tokens += framing,
        None => parts.push(RequestPart::new(PartKind::Question, "user message", framing)),
    }
    Some(parts)
}

/// The ids of the `--- NODE ---` frames in a context block, in order.
fn node_ids(block: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut lines = block.lines();
    while let Some(line) = lines.next() {
        if line == crate::budget::NODE_HEADER
            && let Some(id) = lines.next().and_then(|l| l.strip_prefix("id: "))
        {
            ids.push(id.to_owned());
        }
    }
    ids
}

/// The first 80 characters of `text` on one line.
fn preview(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &flat[..at]),
        None => flat,
    }
}

#[cfg(test)]
#[path = "anatomy_tests.rs"]
mod tests;
