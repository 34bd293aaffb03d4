//! Chat-format overhead: what a list of messages costs beyond its texts.
//!
//! A chat model does not see a list of strings; it sees one token stream in which every message
//! is framed by special tokens and the reply is primed. [`ChatFormat`] adds those tokens so that
//! a count is the count of what the model receives. Every string the request carries (role,
//! content, name, tool-call name and arguments, tool result) is counted exactly, as the exact
//! text sent; what is modelled is only the framing around those strings:
//!
//! - **Plain messages** (role, content, optional name): 3 tokens a message, 1 more for a `name`,
//!   3 to prime the reply — the constants of OpenAI's cookbook "How to count tokens with
//!   tiktoken", which it checked against the API's `prompt_tokens` (129 tokens for its example
//!   conversation under gpt-3.5-turbo / gpt-4, 124 under gpt-4o; both pinned by
//!   `tests/chat.rs`). The cookbook itself calls its counts "an estimate, not a timeless
//!   guarantee": OpenAI may change the framing from model to model.
//! - **Tool schemas**: the cookbook's `num_tokens_for_tools` constants (per function, per
//!   property, per enum item), fitted by the cookbook against the API (105 / 101 tokens for its
//!   weather example, pinned too). The schema rendering itself is not published, so this is an
//!   estimate in the same sense.
//! - **Tool calls and tool results**: the cookbook does not cover them and OpenAI publishes no
//!   chat-completions rendering for them. ctx counts them as OpenAI's published harmony format
//!   renders them, the one OpenAI format that spells tool calls out: a call is
//!   `<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>ARGS<|call|>`
//!   and a result is `<|start|>functions.NAME to=assistant<|channel|>commentary<|message|>RESULT<|end|>`,
//!   each special token one token and each text between them counted exactly. An assistant
//!   message that only calls tools has no text message of its own in that format. This part is
//!   an estimate that no published API number pins.
//! - **Reasoning items** (OpenAI's Responses API) carried on an assistant message: framed as
//!   harmony frames reasoning, their visible text counted exactly and their encrypted part by
//!   the count the server reported (see `reasoning.rs`).
//!
//! This file says what a format is; `format_counts.rs` counts with one.

use std::sync::Arc;

use super::anthropic::{AnthropicFormat, Counting, DEFAULT_ANTHROPIC_MARGIN_PERCENT, RequestCounter};
use super::template::ChatTemplate;

/// Token constants of the OpenAI chat format for one model family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenAiOverhead {
    /// Tokens framing every plain message (`<|start|>`, `<|message|>`, `<|end|>`); the role's own
    /// text is counted separately.
    pub per_message: usize,
    /// Extra tokens when a message has a `name` (besides the name's own tokens).
    pub per_name: isize,
    /// Tokens that prime the assistant's reply (`<|start|>assistant<|message|>`).
    pub reply_priming: usize,
    /// Tokens before each function in the tool block.
    pub func_init: usize,
    /// Tokens before a function's properties.
    pub prop_init: usize,
    /// Tokens per property.
    pub prop_key: usize,
    /// Tokens (possibly negative) when a property has an `enum`.
    pub enum_init: isize,
    /// Tokens per enum item.
    pub enum_item: usize,
    /// Tokens closing the tool block.
    pub func_end: usize,
    /// Special tokens framing one tool call (`<|start|>`, `<|channel|>`, `<|constrain|>`,
    /// `<|message|>`, `<|call|>` in the harmony rendering).
    pub tool_call_specials: usize,
    /// Special tokens framing one tool result (`<|start|>`, `<|channel|>`, `<|message|>`,
    /// `<|end|>` in the harmony rendering).
    pub tool_result_specials: usize,
}

/// How a model family wraps messages and tools.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChatFormat {
    /// OpenAI chat completions (and servers that mimic its format).
    OpenAi(OpenAiOverhead),
    /// A server that renders the model's chat template into one prompt string (llama.cpp and
    /// the like): the count is the count of the rendered prompt.
    Template(ChatTemplate),
    /// Anthropic's Messages API: exact counts from its `count_tokens` endpoint, or a declared
    /// tokenizer's estimate with a margin (see [`AnthropicFormat`]).
    Anthropic(AnthropicFormat),
}

impl ChatFormat {
    /// gpt-4o / gpt-4o-mini and later (the cookbook's 124-token and 101-token examples).
    pub fn openai() -> Self {
        ChatFormat::OpenAi(OpenAiOverhead {
            per_message: 3,
            per_name: 1,
            reply_priming: 3,
            func_init: 7,
            prop_init: 3,
            prop_key: 3,
            enum_init: -3,
            enum_item: 3,
            func_end: 12,
            tool_call_specials: 5,
            tool_result_specials: 4,
        })
    }

    /// gpt-3.5-turbo / gpt-4 (the cookbook's 129-token and 105-token examples); only the tool
    /// block's per-function constant differs.
    pub fn openai_gpt4() -> Self {
        match Self::openai() {
            ChatFormat::OpenAi(o) => ChatFormat::OpenAi(OpenAiOverhead { func_init: 10, ..o }),
            other => other,
        }
    }

    /// Anthropic's format estimated with the counter's declared tokenizer, every count raised by
    /// `margin_percent` (use it with [`super::estimated_counter`], whose backend applies the
    /// margin); the contract reports these counts as estimated.
    pub fn anthropic_estimated(margin_percent: u32) -> Self {
        ChatFormat::Anthropic(AnthropicFormat::estimated(margin_percent))
    }

    /// Anthropic's format with whole requests counted exactly by `counter` (its `count_tokens`
    /// endpoint).
    pub fn anthropic_endpoint(counter: Arc<dyn RequestCounter>) -> Self {
        ChatFormat::Anthropic(AnthropicFormat::endpoint(counter))
    }

    /// Whether requests are counted exactly or estimated with a margin. The OpenAI format's
    /// framing constants and templates count what the model receives; only Anthropic's estimate
    /// is not a count.
    pub fn counting(&self) -> Counting {
        match self {
            ChatFormat::Anthropic(a) => a.counting(),
            ChatFormat::OpenAi(_) | ChatFormat::Template(_) => Counting::Exact,
        }
    }

    /// The format for a model name: gpt-3.5 / gpt-4 (not 4o / 4.1) use [`Self::openai_gpt4`],
    /// Claude models (`claude…`) [`Self::anthropic_estimated`] with
    /// [`DEFAULT_ANTHROPIC_MARGIN_PERCENT`], every other model [`Self::openai`].
    /// A fine-tune (`ft:gpt-4-0613:org::id`) takes its base model's format.
    pub fn for_model(model: &str) -> Self {
        if model.starts_with("claude") {
            return Self::anthropic_estimated(DEFAULT_ANTHROPIC_MARGIN_PERCENT);
        }
        let model = match model.strip_prefix("ft:") {
            Some(rest) => rest.split(':').next().unwrap_or(rest),
            None => model,
        };
        let legacy = model.starts_with("gpt-3.5")
            || (model.starts_with("gpt-4") && !model.starts_with("gpt-4o") && !model.starts_with("gpt-4."));
        if legacy { Self::openai_gpt4() } else { Self::openai() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_models_get_the_legacy_tool_constant() {
        assert_eq!(ChatFormat::for_model("gpt-4-0613"), ChatFormat::openai_gpt4());
        assert_eq!(ChatFormat::for_model("gpt-3.5-turbo"), ChatFormat::openai_gpt4());
        assert_eq!(ChatFormat::for_model("ft:gpt-4-0613:acme::8Xyz"), ChatFormat::openai_gpt4());
        for modern in ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "o3-mini", "ft:gpt-4o-mini-2024-07-18:acme::1"] {
            assert_eq!(ChatFormat::for_model(modern), ChatFormat::openai(), "{modern}");
        }
    }
}
