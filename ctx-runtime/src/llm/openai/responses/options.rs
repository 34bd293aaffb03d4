//! What the Responses API has that chat completions has not: [`ResponsesOptions`], with the
//! [`ReasoningEffort`] it may send.

/// How long the model reasons before it answers (`reasoning.effort`); unset leaves it to the
/// server. Only reasoning models accept it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReasoningEffort {
    /// `minimal`.
    Minimal,
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
}

impl ReasoningEffort {
    /// The value sent.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

/// What the Responses API has that chat completions has not.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResponsesOptions {
    /// `reasoning.effort`; `None` (the default) sends none.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Ask for reasoning items whole and hand them back on the reply, to be sent again with the
    /// tool calls they led to (default `true`). Sends `store: false` and
    /// `include: ["reasoning.encrypted_content"]`. `false` sends neither and drops the items: a
    /// reasoning model then starts its reasoning afresh after each tool result. A server may
    /// refuse that `include` for a model that does not reason: turn this off for such a model
    /// (the refusal comes back as the server's HTTP error, nothing is retried).
    pub carry_reasoning: bool,
}

impl Default for ResponsesOptions {
    fn default() -> Self {
        ResponsesOptions { reasoning_effort: None, carry_reasoning: true }
    }
}

ctx_spec::setters!(ResponsesOptions { reasoning_effort: Option<ReasoningEffort>, carry_reasoning: bool });
