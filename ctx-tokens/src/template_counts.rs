//! Counting with a chat template: the count of the prompt the server renders, whole or message by
//! message, after checking that the counter reads the template's special tokens as the single
//! tokens the server makes of them (`template.rs` says why).
//!
//! Apart from the template (`template.rs`) because the counter holds a chat format, and a format
//! may be a template: the template sits below the counter, the counting with it above.

use super::counter::TokenCounter;
use super::template::{ChatTemplate, Kind};
use crate::TokenError;
use crate::chat::{ChatMessage, ToolSchema};

// Written here, not with the type: they count with a `TokenCounter`, which holds the template.
impl ChatTemplate {
    /// Tokens of `messages` as the server sees them: the count of the whole rendered prompt.
    pub fn count_messages(&self, counter: &TokenCounter, messages: &[ChatMessage]) -> Result<usize, TokenError> {
        self.check_specials(counter)?;
        match &self.kind {
            Kind::ChatMl(_) => counter.count(&self.render(messages)?),
            #[cfg(feature = "hf")]
            Kind::Jinja(t) => super::jinja_counts::count_messages(t, counter, messages),
        }
    }

    /// What each message adds to a request; with the reply priming (the count of no messages)
    /// they sum to [`Self::count_messages`].
    ///
    /// ChatML: the count of each message's own frame (`<|im_start|>role\ncontent<|im_end|>\n`);
    /// the tokenizers cut the prompt at every special token before they run BPE on the text
    /// between them, so frames do not merge across their boundaries. A Jinja template: what the
    /// rendered conversation grows by with each message. `history::trim_history` still confirms
    /// the kept slice with one count of the whole.
    pub fn message_costs(&self, counter: &TokenCounter, messages: &[ChatMessage]) -> Result<Vec<usize>, TokenError> {
        self.check_specials(counter)?;
        match &self.kind {
            Kind::ChatMl(t) => messages
                .iter()
                .enumerate()
                .map(|(index, m)| {
                    self.check_chatml_supported(index, m)?;
                    counter.count(&t.frame(m))
                })
                .collect(),
            #[cfg(feature = "hf")]
            Kind::Jinja(t) => super::jinja_counts::message_costs(t, counter, messages),
        }
    }

    /// What one message adds to a conversation: [`Self::message_costs`] of it, for a Jinja
    /// template after a system message (or alone, when the template refuses that).
    pub fn message_cost(&self, counter: &TokenCounter, m: &ChatMessage) -> Result<usize, TokenError> {
        self.check_specials(counter)?;
        match &self.kind {
            Kind::ChatMl(t) => {
                self.check_chatml_supported(0, m)?;
                counter.count(&t.frame(m))
            }
            #[cfg(feature = "hf")]
            Kind::Jinja(t) => super::jinja_counts::message_cost(t, counter, m),
        }
    }

    /// Tool schemas on their own: what they add to a one-message request. A template that does
    /// not render them refuses any schema (an empty list costs nothing).
    pub fn count_tools(&self, counter: &TokenCounter, tools: &[ToolSchema]) -> Result<usize, TokenError> {
        match &self.kind {
            Kind::ChatMl(_) => {
                // ChatML renders no schema: nothing to count, only to refuse.
                let _ = counter;
                self.count_tools_chatml(tools)
            }
            #[cfg(feature = "hf")]
            Kind::Jinja(t) => {
                self.check_specials(counter)?;
                super::jinja_counts::count_tools(t, counter, tools)
            }
        }
    }

    /// A backend that reads `<|im_start|>` as ordinary text would count every frame as several
    /// tokens; refuse it. The counts are cached, so this costs one lookup per special after the
    /// first call.
    pub(crate) fn check_specials(&self, counter: &TokenCounter) -> Result<(), TokenError> {
        for special in &self.specials {
            let n = counter.count(special)?;
            if n != 1 {
                return Err(TokenError::Backend {
                    backend: counter.backend_id().to_owned(),
                    reason: format!(
                        "chat template `{}` needs a tokenizer that reads `{special}` as one special token; \
                         this backend counts {n} tokens for it (use the model's own tokenizer)",
                        self.name
                    ),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ToolCall;
    use crate::{ChatFormat, Encoding};

    #[test]
    fn what_the_template_cannot_show_is_refused() {
        let t = ChatTemplate::chatml("chatml", None);
        let call = ToolCall { id: "c1".into(), name: "f".into(), arguments: "{}".into() };
        let err = t.render(&[ChatMessage::user("q"), ChatMessage::assistant_tool_calls("", vec![call])]).unwrap_err();
        assert!(matches!(err, TokenError::TemplateUnsupported { .. }));
        assert!(err.to_string().contains("message 1"), "{err}");
        assert!(t.render(&[ChatMessage::user("q").with_name("ann")]).is_err());
        let tool = ToolSchema { name: "search".into(), description: "d".into(), parameters: serde_json::json!({}) };
        let c = TokenCounter::for_encoding(Encoding::Cl100kBase);
        assert!(t.count_tools(&c, &[tool]).unwrap_err().to_string().contains("search"));
        assert_eq!(t.count_tools(&c, &[]).unwrap(), 0);
    }

    #[test]
    fn a_tokenizer_that_splits_the_specials_is_refused() {
        // cl100k reads `<|im_start|>` as ordinary text (several tokens): counting a ChatML
        // prompt with it would be wrong, so it is an error, not a number.
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase)
            .with_format(ChatFormat::Template(ChatTemplate::chatml("smollm2", None)));
        let err = counter.count_messages(&[ChatMessage::user("hi")]).unwrap_err();
        assert!(matches!(err, TokenError::Backend { .. }));
        assert!(err.to_string().contains("<|im_start|>"), "{err}");
    }
}
