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

use crate::TokenError;
use crate::chat::{ChatMessage, ToolSchema};

/// A chat template: how a server turns messages into the one prompt string it tokenizes.
///
/// `tests/llama_server.rs` checks the count of the rendered prompt against a real server's
/// `usage.prompt_tokens`, request by request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTemplate {
    pub(crate) name: String,
    pub(crate) kind: Kind,
    pub(crate) specials: Vec<String>,
}

/// Which kind of template; `template_counts.rs` counts by it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    ChatMl(ChatMl),
    #[cfg(feature = "hf")]
    Jinja(super::jinja::JinjaTemplate),
}

/// ChatML: every message is `open + role + after_role + content + close`, the reply is primed
/// with `generation_prompt`, and a default system message is inserted when the conversation does
/// not start with one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChatMl {
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
                super::jinja::check_supported(t, messages)?;
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
                super::jinja::check_supported(t, messages)?;
                super::jinja::check_tools_supported(t, tools)?;
                t.render(messages, tools, true)
            }
        }
    }

    pub(crate) fn check_chatml_supported(&self, index: usize, m: &ChatMessage) -> Result<(), TokenError> {
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

    pub(crate) fn count_tools_chatml(&self, tools: &[ToolSchema]) -> Result<usize, TokenError> {
        match tools.first() {
            None => Ok(0),
            Some(tool) => Err(TokenError::TemplateUnsupported {
                template: self.name.clone(),
                what: format!("tool schemas (`{}`)", tool.name),
            }),
        }
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

    pub(crate) fn frame(&self, m: &ChatMessage) -> String {
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
}
