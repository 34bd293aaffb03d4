//! Chat templates: the exact prompt text a template-driven server builds from a list of messages.
//!
//! Servers that run open-weight models (llama.cpp, llama-cpp-python, vLLM, Ollama) do not frame
//! messages with hidden constants the way OpenAI's API does: they render the model's own chat
//! template (a Jinja template stored in the model file) into one string and tokenize that string,
//! special tokens included. [`ChatTemplate`] renders the same string, so a count of the rendered
//! prompt is the count of what the model receives — no per-message constant is modelled at all.
//!
//! Two kinds: the model's own Jinja template (`ChatTemplate::jinja`, feature `hf`, read from
//! the model's files by `ModelFiles`), and a hand-written ChatML
//! ([`ChatTemplate::chatml`]) for a server known to frame with ChatML.
//!
//! The counter used with a template must tokenize the template's special tokens
//! (`<|im_start|>`, `<|im_end|>`) as the single tokens the server makes of them, as
//! [`RemoteTokenizer`](super::RemoteTokenizer) (the server's own tokenizer) and the model-file
//! tokenizers do. A backend that reads them as ordinary text would count several tokens for each;
//! counting with a template checks this first and refuses such a backend instead of returning a
//! wrong count.

use super::TokenCounter;
use crate::TokenError;
use crate::chat::{ChatMessage, ToolSchema};

/// A chat template: how a server turns messages into the one prompt string it tokenizes.
///
/// `tests/llama_server.rs` checks the count of the rendered prompt against a real server's
/// `usage.prompt_tokens`, request by request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTemplate {
    name: String,
    kind: Kind,
    specials: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    ChatMl(ChatMl),
    #[cfg(feature = "hf")]
    Jinja(super::jinja::JinjaTemplate),
}

/// ChatML: every message is `open + role + after_role + content + close`, the reply is primed
/// with `generation_prompt`, and a default system message is inserted when the conversation does
/// not start with one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ChatMl {
    open: String,
    after_role: String,
    close: String,
    generation_prompt: String,
    default_system: Option<String>,
}

impl ChatTemplate {
    /// ChatML (`<|im_start|>{role}\n{content}<|im_end|>\n` per message, `<|im_start|>assistant\n`
    /// to prime the reply), with `default_system` inserted before a conversation whose first
    /// message is not a system message. `name` identifies the template in errors.
    pub fn chatml(name: impl Into<String>, default_system: Option<&str>) -> Self {
        ChatTemplate {
            name: name.into(),
            kind: Kind::ChatMl(ChatMl {
                open: "<|im_start|>".into(),
                after_role: "\n".into(),
                close: "<|im_end|>\n".into(),
                generation_prompt: "<|im_start|>assistant\n".into(),
                default_system: default_system.map(str::to_owned),
            }),
            specials: vec!["<|im_start|>".into(), "<|im_end|>".into()],
        }
    }

    /// The model's own Jinja template. `specials` are the special-token texts it writes, each of
    /// which the counter must read as one token (the model files' added tokens that occur in the
    /// template, and its BOS/EOS); [`ModelFiles`](super::ModelFiles) finds them.
    #[cfg(feature = "hf")]
    #[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
    pub fn jinja(template: super::jinja::JinjaTemplate, specials: Vec<String>) -> Self {
        ChatTemplate { name: template.name().to_owned(), kind: Kind::Jinja(template), specials }
    }

    /// The Jinja template, when this is one.
    #[cfg(feature = "hf")]
    #[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
    pub fn as_jinja(&self) -> Option<&super::jinja::JinjaTemplate> {
        match &self.kind {
            Kind::Jinja(t) => Some(t),
            Kind::ChatMl(_) => None,
        }
    }

    /// The template's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The special tokens the template writes (each must count as one token).
    pub fn special_tokens(&self) -> &[String] {
        &self.specials
    }

    /// The prompt text the server renders for `messages`, reply priming included.
    ///
    /// What the template has no place for — tool calls, message names — is refused
    /// ([`TokenError::TemplateUnsupported`]) rather than rendered without it, since the server
    /// would silently drop what the model was meant to see. (A Jinja template is asked: the
    /// message is rendered with and without the field, and the same text means it is dropped.)
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String, TokenError> {
        match &self.kind {
            Kind::ChatMl(t) => {
                for (index, m) in messages.iter().enumerate() {
                    self.check_chatml_supported(index, m)?;
                }
                Ok(t.render(messages))
            }
            #[cfg(feature = "hf")]
            Kind::Jinja(t) => {
                super::jinja_counts::check_supported(t, messages)?;
                t.render(messages, &[], true)
            }
        }
    }

    /// The prompt text for `messages` and `tools` together, reply priming included.
    pub fn render_request(&self, messages: &[ChatMessage], tools: &[ToolSchema]) -> Result<String, TokenError> {
        match &self.kind {
            Kind::ChatMl(_) => {
                self.count_tools_chatml(tools)?;
                self.render(messages)
            }
            #[cfg(feature = "hf")]
            Kind::Jinja(t) => {
                super::jinja_counts::check_supported(t, messages)?;
                super::jinja_counts::check_tools_supported(t, tools)?;
                t.render(messages, tools, true)
            }
        }
    }

    fn check_chatml_supported(&self, index: usize, m: &ChatMessage) -> Result<(), TokenError> {
        let unsupported = if !m.tool_calls.is_empty() {
            Some("tool calls")
        } else if m.name.is_some() {
            Some("message names")
        } else {
            None
        };
        match unsupported {
            None => Ok(()),
            Some(what) => Err(TokenError::TemplateUnsupported {
                template: self.name.clone(),
                what: format!("{what} (message {index}, role {})", m.role.as_str()),
            }),
        }
    }

    /// Tokens of `messages` as the server sees them: the count of the whole rendered prompt.
    pub fn count_messages(&self, counter: &TokenCounter, messages: &[ChatMessage]) -> Result<usize, TokenError> {
        self.check_specials(counter)?;
        match &self.kind {
            Kind::ChatMl(_) => counter.count(&self.render(messages)?),
            #[cfg(feature = "hf")]
            Kind::Jinja(t) => super::jinja_counts::count_messages(t, counter, messages),
        }
    }

    /// Tokens of a whole request: messages and tool schemas rendered together.
    pub fn count_request(
        &self,
        counter: &TokenCounter,
        messages: &[ChatMessage],
        tools: &[ToolSchema],
    ) -> Result<usize, TokenError> {
        if tools.is_empty() {
            return self.count_messages(counter, messages);
        }
        self.check_specials(counter)?;
        counter.count(&self.render_request(messages, tools)?)
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

    fn count_tools_chatml(&self, tools: &[ToolSchema]) -> Result<usize, TokenError> {
        match tools.first() {
            None => Ok(0),
            Some(tool) => Err(TokenError::TemplateUnsupported {
                template: self.name.clone(),
                what: format!("tool schemas (`{}`)", tool.name),
            }),
        }
    }

    /// A backend that reads `<|im_start|>` as ordinary text would count every frame as several
    /// tokens; refuse it. The counts are cached, so this costs one lookup per special after the
    /// first call.
    fn check_specials(&self, counter: &TokenCounter) -> Result<(), TokenError> {
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

impl ChatMl {
    fn render(&self, messages: &[ChatMessage]) -> String {
        let mut out = String::new();
        let starts_with_system = messages.first().is_some_and(|m| m.role == crate::chat::Role::System);
        if let (Some(system), false) = (&self.default_system, starts_with_system) {
            self.push_message(&mut out, "system", system);
        }
        for m in messages {
            self.push_message(&mut out, m.role.as_str(), &m.content);
        }
        out.push_str(&self.generation_prompt);
        out
    }

    fn frame(&self, m: &ChatMessage) -> String {
        let mut frame = String::new();
        self.push_message(&mut frame, m.role.as_str(), &m.content);
        frame
    }

    fn push_message(&self, out: &mut String, role: &str, content: &str) {
        out.push_str(&self.open);
        out.push_str(role);
        out.push_str(&self.after_role);
        out.push_str(content);
        out.push_str(&self.close);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ToolCall;
    use crate::{ChatFormat, Encoding};

    const SMOLLM_SYSTEM: &str = "You are a helpful AI assistant named SmolLM, trained by Hugging Face";

    #[test]
    fn renders_chatml_with_a_default_system_message() {
        let t = ChatTemplate::chatml("smollm2", Some(SMOLLM_SYSTEM));
        let rendered = t.render(&[ChatMessage::user("hi")]).unwrap();
        assert_eq!(
            rendered,
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
             <|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
        let own_system = t.render(&[ChatMessage::system("Be terse."), ChatMessage::user("hi")]).unwrap();
        assert_eq!(
            own_system,
            "<|im_start|>system\nBe terse.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
        // The default system message is only inserted before the first message.
        let later_system = t.render(&[ChatMessage::user("a"), ChatMessage::system("b")]).unwrap();
        assert_eq!(later_system.matches("<|im_start|>system\n").count(), 2);
        assert_eq!(
            t.render(&[]).unwrap(),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
             <|im_start|>assistant\n"
        );
    }

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
            .with_format(ChatFormat::Template(ChatTemplate::chatml("smollm2", Some(SMOLLM_SYSTEM))));
        let err = counter.count_messages(&[ChatMessage::user("hi")]).unwrap_err();
        assert!(matches!(err, TokenError::Backend { .. }));
        assert!(err.to_string().contains("<|im_start|>"), "{err}");
    }
}
