//! Counting with a model's Jinja chat template: whole prompts, per-message costs, tools.
//!
//! A Jinja template has no per-message frame to count on its own: a message's cost is what the
//! rendered conversation grows by when the message is added. The tokenizers that go with these
//! templates cut the prompt at every special token before running BPE on the text between, so
//! when a rendering extends the previous one at such a cut, the growth is the count of the new
//! text alone; each cost is computed that way, and the sum is checked once against the count of
//! the whole rendering — on a mismatch (a template that rewrites earlier text, a tokenizer whose
//! specials swallow neighbouring whitespace) every cost is recounted from whole renderings.
//!
//! A template that cannot render an empty conversation (Qwen 2.5's reads `messages[0]`) counts
//! the reply priming as what `add_generation_prompt` adds to a one-message conversation.

use super::counter::TokenCounter;
use super::jinja::{JinjaTemplate, check_supported, check_tools_supported, probe};
use crate::TokenError;
use crate::chat::{ChatMessage, Role, ToolSchema};

/// The count of the rendered prompt, reply priming included.
pub(super) fn count_messages(
    t: &JinjaTemplate,
    counter: &TokenCounter,
    messages: &[ChatMessage],
) -> Result<usize, TokenError> {
    if messages.is_empty() {
        return priming(t, counter);
    }
    check_supported(t, messages)?;
    counter.count(&t.render(messages, &[], true)?)
}

/// What a request of no messages costs: the empty rendering, or, for a template that cannot
/// render one, what `add_generation_prompt` adds.
fn priming(t: &JinjaTemplate, counter: &TokenCounter) -> Result<usize, TokenError> {
    if let Ok(text) = t.render(&[], &[], true) {
        return counter.count(&text);
    }
    let with = counter.count(&t.render(&probe(), &[], true)?)?;
    let without = counter.count(&t.render(&probe(), &[], false)?)?;
    Ok(with.saturating_sub(without))
}

/// The rendering of no messages without priming, and its count (an empty text when the template
/// cannot render none; see [`priming`]).
fn base(t: &JinjaTemplate, counter: &TokenCounter) -> Result<(String, usize), TokenError> {
    match t.render(&[], &[], false) {
        Ok(text) => {
            let n = counter.count(&text)?;
            Ok((text, n))
        }
        Err(_) => Ok((String::new(), 0)),
    }
}

/// What each message adds to the rendered conversation (see the module documentation).
pub(super) fn message_costs(
    t: &JinjaTemplate,
    counter: &TokenCounter,
    messages: &[ChatMessage],
) -> Result<Vec<usize>, TokenError> {
    check_supported(t, messages)?;
    let (mut previous, base_count) = base(t, counter)?;
    let mut costs = Vec::with_capacity(messages.len());
    let mut renderings = Vec::with_capacity(messages.len());
    for end in 1..=messages.len() {
        let text = t.render(&messages[..end], &[], false)?;
        let cost = match text.strip_prefix(previous.as_str()) {
            Some(grown) => counter.count(grown)?,
            // The template rewrote earlier text: recount below.
            None => usize::MAX,
        };
        costs.push(cost);
        previous = text.clone();
        renderings.push(text);
    }
    let whole = match renderings.last() {
        Some(text) => counter.count(text)?.saturating_sub(base_count),
        None => return Ok(costs),
    };
    if costs.iter().try_fold(0usize, |sum, &c| sum.checked_add(c)) == Some(whole) {
        return Ok(costs);
    }
    // Not additive at these cuts: each cost from whole renderings.
    let mut before = base_count;
    for (cost, text) in costs.iter_mut().zip(&renderings) {
        let n = counter.count(text)?;
        *cost = n.saturating_sub(before);
        before = n;
    }
    Ok(costs)
}

/// What `m` adds after a system message (or as the first message, when the template refuses
/// that context, or `m` is itself a system message).
pub(super) fn message_cost(t: &JinjaTemplate, counter: &TokenCounter, m: &ChatMessage) -> Result<usize, TokenError> {
    if m.role != Role::System {
        let context = [ChatMessage::system("")];
        let pair = [context[0].clone(), m.clone()];
        if let (Ok(before), Ok(after)) = (t.render(&context, &[], false), t.render(&pair, &[], false)) {
            check_supported(t, &pair)?;
            return Ok(counter.count(&after)?.saturating_sub(counter.count(&before)?));
        }
    }
    let costs = message_costs(t, counter, std::slice::from_ref(m))?;
    Ok(costs.first().copied().unwrap_or(0))
}

/// What tool schemas add to a one-message request (0 for none; refused when not rendered).
pub(super) fn count_tools(
    t: &JinjaTemplate,
    counter: &TokenCounter,
    tools: &[ToolSchema],
) -> Result<usize, TokenError> {
    if tools.is_empty() {
        return Ok(0);
    }
    check_tools_supported(t, tools)?;
    let with = counter.count(&t.render(&probe(), tools, false)?)?;
    let without = counter.count(&t.render(&probe(), &[], false)?)?;
    Ok(with.saturating_sub(without))
}
