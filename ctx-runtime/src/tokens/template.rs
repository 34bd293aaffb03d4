//! Chat templates: the exact prompt text a template-driven server builds from a list of messages.
//!
//! Servers that run open-weight models (llama.cpp, llama-cpp-python, vLLM, Ollama) do not frame
//! messages with hidden constants the way OpenAI's API does: they render the model's own chat
//! template (a Jinja template stored in the model file) into one string and tokenize that string,
//! special tokens included. [`ChatTemplate`] renders the same string, so a count of the rendered
//! prompt is the count of what the model receives — no per-message constant is modelled at all.
//!
//! The counter used with a template must tokenize the template's special tokens
//! (`<|im_start|>`, `<|im_end|>`) as the single tokens the server makes of them, as
//! [`RemoteTokenizer`](super::RemoteTokenizer) does (it asks the server's own tokenizer). A
//! backend that reads them as ordinary text would count several tokens for each; counting with a
//! template checks this first and refuses such a backend instead of returning a wrong count.

use super::TokenCounter;
use crate::chat::{ChatMessage, ToolSchema};
use crate::tokens::TokenError;

/// A chat template of the ChatML family: every message is `open + role + after_role + content +
/// close`, the reply is primed with `generation_prompt`, and a default system message is inserted
/// when the conversation does not start with one.
///
/// Rendering follows the model's Jinja template exactly (SmolLM2's is reproduced in
/// [`Self::smollm2`]); `tests/llama_server.rs` checks the rendered count against the server's
/// `usage.prompt_tokens`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTemplate {
    name: String,
    open: String,
    after_role: String,
    close: String,
    generation_prompt: String,
    default_system: Option<String>,
    specials: Vec<String>,
}

impl ChatTemplate {
    /// ChatML (`<|im_start|>{role}\n{content}<|im_end|>\n` per message, `<|im_start|>assistant\n`
    /// to prime the reply), with `default_system` inserted before a conversation whose first
    /// message is not a system message. `name` identifies the template in errors.
    pub fn chatml(name: impl Into<String>, default_system: Option<&str>) -> Self {
        ChatTemplate {
            name: name.into(),
            open: "<|im_start|>".into(),
            after_role: "\n".into(),
            close: "<|im_end|>\n".into(),
            generation_prompt: "<|im_start|>assistant\n".into(),
            default_system: default_system.map(str::to_owned),
            specials: vec!["<|im_start|>".into(), "<|im_end|>".into()],
        }
    }

    /// The template in SmolLM2-Instruct's model files (`tokenizer.chat_template` of
    /// SmolLM2-135M-Instruct): ChatML with the default system message "You are a helpful AI
    /// assistant named SmolLM, trained by Hugging Face" and no BOS token
    /// (`tokenizer.ggml.add_bos_token = false`).
    pub fn smollm2() -> Self {
        Self::chatml("smollm2", Some("You are a helpful AI assistant named SmolLM, trained by Hugging Face"))
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
    /// The template has no place for tool calls, tool-call ids or names; a message carrying one
    /// is refused ([`TokenError::TemplateUnsupported`]) rather than rendered without it, since the
    /// server would silently drop what the model was meant to see.
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String, TokenError> {
        let mut out = String::new();
        let starts_with_system = messages.first().is_some_and(|m| m.role == crate::chat::Role::System);
        if let (Some(system), false) = (&self.default_system, starts_with_system) {
            self.push_message(&mut out, "system", system);
        }
        for (index, m) in messages.iter().enumerate() {
            self.check_supported(index, m)?;
            self.push_message(&mut out, m.role.as_str(), &m.content);
        }
        out.push_str(&self.generation_prompt);
        Ok(out)
    }

    fn check_supported(&self, index: usize, m: &ChatMessage) -> Result<(), TokenError> {
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

    fn push_message(&self, out: &mut String, role: &str, content: &str) {
        out.push_str(&self.open);
        out.push_str(role);
        out.push_str(&self.after_role);
        out.push_str(content);
        out.push_str(&self.close);
    }

    /// Tokens of `messages` as the server sees them: the count of the whole rendered prompt.
    pub fn count_messages(&self, counter: &TokenCounter, messages: &[ChatMessage]) -> Result<usize, TokenError> {
        self.check_specials(counter)?;
        counter.count(&self.render(messages)?)
    }

    /// What each message adds to a request: the count of its own rendered frame
    /// (`<|im_start|>role\ncontent<|im_end|>\n`). llama.cpp's tokenizer cuts the prompt at every
    /// special token before it runs BPE on the text between them, so frames do not merge across
    /// their boundaries and these costs sum to the messages' share of [`Self::count_messages`];
    /// `history::trim_history` still confirms the kept slice with one count of the whole.
    pub fn message_costs(&self, counter: &TokenCounter, messages: &[ChatMessage]) -> Result<Vec<usize>, TokenError> {
        self.check_specials(counter)?;
        messages.iter().enumerate().map(|(index, m)| self.frame_tokens(counter, index, m)).collect()
    }

    /// [`Self::message_costs`] of one message.
    pub fn message_cost(&self, counter: &TokenCounter, m: &ChatMessage) -> Result<usize, TokenError> {
        self.check_specials(counter)?;
        self.frame_tokens(counter, 0, m)
    }

    fn frame_tokens(&self, counter: &TokenCounter, index: usize, m: &ChatMessage) -> Result<usize, TokenError> {
        self.check_supported(index, m)?;
        let mut frame = String::new();
        self.push_message(&mut frame, m.role.as_str(), &m.content);
        counter.count(&frame)
    }

    /// Tool schemas: the template does not render them, so any schema is refused (an empty list
    /// costs nothing).
    pub fn count_tools(&self, tools: &[ToolSchema]) -> Result<usize, TokenError> {
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
                         this backend counts {n} tokens for it (use the server's own tokenizer)",
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
    use crate::tokens::{ChatFormat, Encoding};

    #[test]
    fn renders_smollm2_exactly_as_its_jinja_template() {
        let t = ChatTemplate::smollm2();
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
        assert!(t.count_tools(&[tool]).unwrap_err().to_string().contains("search"));
        assert_eq!(t.count_tools(&[]).unwrap(), 0);
    }

    #[test]
    fn a_tokenizer_that_splits_the_specials_is_refused() {
        // cl100k reads `<|im_start|>` as ordinary text (several tokens): counting a ChatML
        // prompt with it would be wrong, so it is an error, not a number.
        let counter =
            TokenCounter::for_encoding(Encoding::Cl100kBase).with_format(ChatFormat::Template(ChatTemplate::smollm2()));
        let err = counter.count_messages(&[ChatMessage::user("hi")]).unwrap_err();
        assert!(matches!(err, TokenError::Backend { .. }));
        assert!(err.to_string().contains("<|im_start|>"), "{err}");
    }
}
