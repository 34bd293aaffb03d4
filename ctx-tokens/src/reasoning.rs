//! OpenAI Responses reasoning items carried on an assistant message: what they add to a request.
//!
//! A reasoning model answering through the Responses API returns `reasoning` output items
//! (`{"type": "reasoning", "id": …, "summary": [{"type": "summary_text", "text": …}],
//! "encrypted_content": …}`, and on open-weight servers `content: [{"type": "reasoning_text",
//! "text": …}]`). ctx keeps them on the assistant message of the tool calls they led to
//! ([`ChatMessage::thinking`]) and sends them back in every later request of the turn, so they
//! count toward those requests' input. What an item adds:
//!
//! - **What can be seen is counted exactly**: every `summary_text` and `reasoning_text` the item
//!   carries, the exact string sent, with the model's tokenizer.
//! - **Its framing**, as OpenAI's published harmony format renders reasoning, the one OpenAI
//!   format that spells it out: `<|start|>assistant<|channel|>analysis<|message|>…<|end|>`, four
//!   special tokens and the texts `assistant` and `analysis` counted exactly (the estimate, in
//!   the same sense as the tool-call framing of [`super::ChatFormat`], that no published API
//!   number pins).
//! - **What cannot be seen**: `encrypted_content` is the model's own reasoning, encrypted by the
//!   provider; no local tokenizer can count it. It is covered by
//!   [`ChatMessage::reasoning_tokens`], the reasoning tokens the server reported for the reply
//!   that produced the items (`usage.output_tokens_details.reasoning_tokens`), or, when it did
//!   not report them, the output limit of that request, which the reasoning was generated
//!   inside. The whole count is added once per message (all of its items come from one reply).
//!   A message carrying encrypted reasoning with no such count is refused
//!   ([`TokenError::UncountedReasoning`]) rather than counted short.
//!
//! A format that renders a chat template, and Anthropic's, cannot place reasoning items: a
//! request carrying them is refused there ([`TokenError::TemplateUnsupported`]).

use serde_json::Value;

use super::TokenCounter;
use crate::TokenError;
use crate::chat::{ChatMessage, Role};

/// Special tokens framing one reasoning item in the harmony rendering (`<|start|>`,
/// `<|channel|>`, `<|message|>`, `<|end|>`).
pub const REASONING_ITEM_SPECIALS: usize = 4;

/// Whether `block` is an OpenAI Responses reasoning item (`"type": "reasoning"`).
pub fn is_reasoning_item(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("reasoning")
}

/// Whether the reasoning item `block` carries reasoning no local tokenizer can see.
fn is_encrypted(block: &Value) -> bool {
    block.get("encrypted_content").and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

/// The visible texts of the reasoning item `block`: its summaries and reasoning texts.
fn visible_texts(block: &Value) -> impl Iterator<Item = &str> {
    ["summary", "content"]
        .into_iter()
        .filter_map(|key| block.get(key).and_then(Value::as_array))
        .flatten()
        .filter_map(|part| part.get("text").and_then(Value::as_str))
}

/// What the reasoning items on `m` add to a request in the OpenAI format (0 when it carries
/// none).
pub(crate) fn reasoning_cost(counter: &TokenCounter, m: &ChatMessage) -> Result<usize, TokenError> {
    let mut total = 0usize;
    let mut encrypted: Option<&Value> = None;
    for item in m.thinking.iter().map(|t| &t.block).filter(|b| is_reasoning_item(b)) {
        total += REASONING_ITEM_SPECIALS;
        total += counter.count(Role::Assistant.as_str())?;
        total += counter.count("analysis")?;
        for text in visible_texts(item) {
            total += counter.count(text)?;
        }
        if encrypted.is_none() && is_encrypted(item) {
            encrypted = Some(item);
        }
    }
    if let Some(item) = encrypted {
        let id = item.get("id").and_then(Value::as_str).unwrap_or("(no id)");
        let hidden = m.reasoning_tokens.ok_or_else(|| TokenError::UncountedReasoning { item: id.to_owned() })?;
        total = total.saturating_add(hidden);
    }
    Ok(total)
}

/// Refuses `messages` when one carries reasoning items: a chat template (or Anthropic's format,
/// named `template` here) has no place for them.
pub(crate) fn refuse_in_template(template: &str, messages: &[ChatMessage]) -> Result<(), TokenError> {
    match messages.iter().position(|m| m.thinking.iter().any(|t| is_reasoning_item(&t.block))) {
        None => Ok(()),
        Some(index) => Err(TokenError::TemplateUnsupported {
            template: template.to_owned(),
            what: format!("OpenAI Responses reasoning items (message {index})"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::{SignedThinking, ToolCall};
    use crate::{ChatFormat, Encoding};

    fn carrying(items: Vec<Value>, hidden: Option<usize>) -> ChatMessage {
        ChatMessage::assistant_tool_calls("", vec![ToolCall::new("c1", "search", "{}")])
            .with_thinking(items.into_iter().map(SignedThinking::new).collect())
            .with_reasoning_tokens(hidden)
    }

    #[test]
    fn visible_text_is_counted_exactly_and_hidden_reasoning_by_its_reported_count() {
        let c = TokenCounter::for_encoding(Encoding::O200kBase);
        let f = ChatFormat::openai();
        let summary = "Plan: look the budget up first.";
        let item = json!({"type": "reasoning", "id": "rs_1",
                          "summary": [{"type": "summary_text", "text": summary}],
                          "encrypted_content": "gAAAA…"});
        let bare = carrying(Vec::new(), None);
        let with = carrying(vec![item.clone()], Some(700));
        let frame = REASONING_ITEM_SPECIALS + c.count("assistant").unwrap() + c.count("analysis").unwrap();
        let added = f.message_cost(&c, &with, None).unwrap() - f.message_cost(&c, &bare, None).unwrap();
        assert_eq!(added, frame + c.count(summary).unwrap() + 700);
        // Two items of one reply: each framed, the reply's hidden count once.
        let two = carrying(vec![item.clone(), json!({"type": "reasoning", "id": "rs_2", "summary": []})], Some(700));
        let added = f.message_cost(&c, &two, None).unwrap() - f.message_cost(&c, &bare, None).unwrap();
        assert_eq!(added, 2 * frame + c.count(summary).unwrap() + 700);
        // Visible reasoning (open-weight servers) needs no reported count.
        let open =
            carrying(vec![json!({"type": "reasoning", "content": [{"type": "reasoning_text", "text": "x+1"}]})], None);
        let added = f.message_cost(&c, &open, None).unwrap() - f.message_cost(&c, &bare, None).unwrap();
        assert_eq!(added, frame + c.count("x+1").unwrap());
        // Anthropic's blocks are not the OpenAI format's to count (its client never sends them).
        let anthropic = carrying(vec![json!({"type": "thinking", "thinking": "t", "signature": "s"})], None);
        assert_eq!(f.message_cost(&c, &anthropic, None).unwrap(), f.message_cost(&c, &bare, None).unwrap());
    }

    #[test]
    fn formats_without_a_place_for_reasoning_items_refuse_them() {
        let c = TokenCounter::for_encoding(Encoding::O200kBase);
        let m = carrying(vec![json!({"type": "reasoning", "id": "rs_1", "summary": []})], Some(3));
        let messages = [ChatMessage::user("q"), m];
        let anthropic = ChatFormat::anthropic_estimated(10);
        for result in [anthropic.count_request(&c, &messages, &[]), anthropic.message_cost(&c, &messages[1], None)] {
            assert!(matches!(result, Err(TokenError::TemplateUnsupported { .. })), "{result:?}");
        }
        // Anthropic's own thinking blocks are its format's to count.
        let own = carrying(vec![json!({"type": "thinking", "thinking": "t", "signature": "s"})], None);
        assert!(anthropic.message_cost(&c, &own, None).is_ok());
    }

    #[test]
    fn encrypted_reasoning_without_a_count_is_refused_not_counted_short() {
        let c = TokenCounter::for_encoding(Encoding::O200kBase);
        let m =
            carrying(vec![json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"})], None);
        let messages = [ChatMessage::user("q"), m];
        let err = ChatFormat::openai().count_messages(&c, &messages).unwrap_err();
        assert_eq!(err, TokenError::UncountedReasoning { item: "rs_1".into() });
        assert!(err.to_string().contains("`rs_1`"), "{err}");
    }
}
