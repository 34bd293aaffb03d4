//! Rendering a declaration into messages, given the current pack texts.
//!
//! This is the one rendering: the assembler measures exactly what it returns, so every budget
//! decision is checked on the text that is sent.

use serde_json::Value;

use super::assembler::{Compiled, Directive, assembled_messages};
use super::error::EngineError;
use crate::chat::{ChatMessage, Role};
use ctx_spec::engine::PackPlacement;
use ctx_spec::engine::{Template, VarRef};

/// What joins the parts of the system prompt, and the messages of a nested context's text.
const PART_SEPARATOR: &str = "\n\n";

/// What a rendering is given besides the declaration and its packs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Frame<'a> {
    pub inputs: &'a serde_json::Map<String, Value>,
    pub base_system: &'a str,
    pub user_fallback: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Fixed,
    Pack,
    User,
    History,
}

#[derive(Debug)]
pub(super) struct Part {
    message: ChatMessage,
    origin: Origin,
    /// Whether the part can hold pack text: a pack's own message, or a text whose template
    /// names a pack. Only these are kept empty under [`Empty::Keep`].
    fills: bool,
}

/// How a rendering treats empty parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Empty {
    /// Drop them: the real rendering.
    Drop,
    /// Keep the ones that packs will fill, with their separators and message overhead:
    /// measures the structure that packs will be inserted into. An empty part no pack can fill
    /// is never sent, so it is dropped here too.
    Keep,
}

/// The messages of `ctx` in order, with pack `i` rendered as `texts[i]`.
pub(super) fn render_parts(
    ctx: &Compiled,
    context_label: &str,
    frame: &Frame<'_>,
    texts: &[&str],
    history: &[ChatMessage],
    top: bool,
    empty: Empty,
) -> Result<Vec<Part>, EngineError> {
    let mut parts = Vec::with_capacity(ctx.directives.len() + history.len() + 1);
    if top && !frame.base_system.is_empty() {
        parts.push(Part { message: ChatMessage::system(frame.base_system), origin: Origin::Fixed, fills: false });
    }
    let mut history_placed = false;
    for directive in &ctx.directives {
        match directive {
            Directive::Text { role, template, label } => {
                let content = render_template(template, ctx, context_label, label, frame, texts)?;
                let origin = if *role == Role::User { Origin::User } else { Origin::Fixed };
                // Rendered with every pack non-empty: does the text depend on a pack?
                let fills = empty == Empty::Keep
                    && content.is_empty()
                    && !render_template(template, ctx, context_label, label, frame, &vec!["x"; ctx.packs.len()])?
                        .is_empty();
                let message = ChatMessage::new(*role, content);
                parts.push(Part { message, origin, fills });
            }
            Directive::Pack { pack } => {
                let def = ctx.packs.get(*pack);
                if def.is_some_and(|d| d.placement == PackPlacement::Message) {
                    let text = texts.get(*pack).copied().unwrap_or("");
                    parts.push(Part { message: ChatMessage::system(text), origin: Origin::Pack, fills: true });
                }
            }
            Directive::History => {
                history_placed = true;
                parts.extend(history.iter().map(|m| Part {
                    message: m.clone(),
                    origin: Origin::History,
                    fills: false,
                }));
            }
        }
    }
    let keep = empty == Empty::Keep;
    parts.retain(|p| p.origin == Origin::History || !p.message.content.is_empty() || (keep && p.fills));
    if !history_placed && !history.is_empty() {
        // Without a `history` directive the history follows the system prompt.
        let at = parts.iter().position(|p| p.message.role != Role::System).unwrap_or(parts.len());
        let tail = parts.split_off(at);
        parts.extend(history.iter().map(|m| Part { message: m.clone(), origin: Origin::History, fills: false }));
        parts.extend(tail);
    }
    Ok(parts)
}

fn render_template(
    template: &Template,
    ctx: &Compiled,
    context_label: &str,
    label: &str,
    frame: &Frame<'_>,
    texts: &[&str],
) -> Result<String, EngineError> {
    template.render(|var| lookup(var, ctx, context_label, label, frame.inputs, texts))
}

/// Renders a retriever's query template (only `input.*` variables).
pub(super) fn render_query(
    template: &Template,
    retriever: &str,
    context_label: &str,
    inputs: &serde_json::Map<String, Value>,
) -> Result<String, EngineError> {
    let label = format!("retriever `{retriever}` query");
    template.render(|var| match var.path.as_slice() {
        [ns, rest @ ..] if ns == "input" => input_value(var, rest, context_label, &label, inputs),
        _ => Err(missing(context_label, &label, var)),
    })
}

fn lookup(
    var: &VarRef,
    ctx: &Compiled,
    context_label: &str,
    label: &str,
    inputs: &serde_json::Map<String, Value>,
    texts: &[&str],
) -> Result<String, EngineError> {
    match var.path.as_slice() {
        [ns, rest @ ..] if ns == "input" => input_value(var, rest, context_label, label, inputs),
        [ns, pack] if ns == "context" => ctx
            .packs
            .iter()
            .position(|p| &p.name == pack)
            .map(|i| texts.get(i).copied().unwrap_or("").to_owned())
            .ok_or_else(|| missing(context_label, label, var)),
        _ => Err(missing(context_label, label, var)),
    }
}

fn missing(context_label: &str, label: &str, var: &VarRef) -> EngineError {
    EngineError::MissingVariable { context: context_label.to_owned(), template: label.to_owned(), variable: var.name() }
}

fn input_value(
    var: &VarRef,
    path: &[String],
    context_label: &str,
    label: &str,
    inputs: &serde_json::Map<String, Value>,
) -> Result<String, EngineError> {
    let Some((first, rest)) = path.split_first() else { return Err(missing(context_label, label, var)) };
    let mut value = inputs.get(first);
    for key in rest {
        value = value.and_then(|v| v.get(key));
    }
    let not_text = |kind| EngineError::VariableNotText {
        context: context_label.to_owned(),
        template: label.to_owned(),
        variable: var.name(),
        kind,
    };
    match value {
        None => Err(missing(context_label, label, var)),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(Value::Bool(b)) => Ok(b.to_string()),
        Some(Value::Null) => Err(not_text("null")),
        Some(Value::Array(_)) => Err(not_text("an array")),
        Some(Value::Object(_)) => Err(not_text("an object")),
    }
}

/// The top-level shape: system prompt, history, user message.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TopLayout {
    pub system_prompt: String,
    pub history: Vec<ChatMessage>,
    pub user_message: String,
    /// Under [`Empty::Keep`]: whether an empty system prompt or user message has a part that a
    /// pack will fill, so that it will be sent. A message with no part at all is never sent and
    /// never counted (a context without a `user` message sends none).
    keep_system: bool,
    keep_user: bool,
}

impl TopLayout {
    /// The exact messages this layout sends.
    pub(crate) fn messages(&self) -> Vec<ChatMessage> {
        assembled_messages(&self.system_prompt, &self.history, &self.user_message, self.keep_system, self.keep_user)
    }
}

/// Leading system parts become the system prompt; the last `user` directive the user message
/// (else the fallback); the rest, in order, the history.
pub(super) fn layout_top(parts: Vec<Part>, user_fallback: &str, empty: Empty) -> TopLayout {
    let lead = parts.iter().position(|p| p.message.role != Role::System || p.origin == Origin::History);
    let lead = lead.unwrap_or(parts.len());
    let mut parts = parts;
    let rest = parts.split_off(lead);
    let system_prompt = parts.iter().map(|p| p.message.content.as_str()).collect::<Vec<_>>().join(PART_SEPARATOR);
    let user_at = rest.iter().rposition(|p| p.origin == Origin::User);
    let mut user_message = user_fallback.to_owned();
    let mut history = Vec::with_capacity(rest.len());
    for (i, part) in rest.into_iter().enumerate() {
        if Some(i) == user_at {
            user_message = part.message.content;
        } else {
            history.push(part.message);
        }
    }
    let keep = empty == Empty::Keep;
    TopLayout {
        system_prompt,
        history,
        user_message,
        keep_system: keep && lead > 0,
        keep_user: keep && user_at.is_some(),
    }
}

/// A nested context's text: its parts' contents joined by a blank line.
pub(super) fn layout_text(parts: &[Part]) -> String {
    parts.iter().map(|p| p.message.content.as_str()).collect::<Vec<_>>().join(PART_SEPARATOR)
}
