//! Output negotiation: how many tokens a reply may have, given what the request already holds.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::negotiate`.

use crate::chat::{ChatMessage, ToolSchema};
use crate::codes::{Code, ErrorCode};
use crate::history::{HistoryTrim, trim_after_system};
use crate::llm::ChatRequest;
use crate::tokens::TokenError;
use crate::tokens::{ModelInfo, TokenCounter};
use crate::validation::{ConfigIssue, FieldPath};

/// The heading of the system message that carries memories.
const MEMORIES_HEADING: &str = "Relevant memories:";

/// The knobs of negotiation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct NegotiationConfig {
    /// Tokens kept free between input plus output and the window.
    pub safety_margin: usize,
    /// The least output worth asking for. A request for fewer tokens than this is served as asked
    /// (the floor never raises an output above what was requested); 0 is treated as 1.
    pub floor: usize,
}

impl NegotiationConfig {
    /// The spec's margin.
    pub const DEFAULT_SAFETY_MARGIN: usize = 100;
    /// The spec's floor: the contract's [`OUTPUT_FLOOR_TOKENS`](ctx_spec::contract::OUTPUT_FLOOR_TOKENS), the
    /// least output limit its help suggests.
    pub const DEFAULT_FLOOR: usize = ctx_spec::contract::OUTPUT_FLOOR_TOKENS;

    /// Every problem with these settings (paths under `at`).
    pub fn validate(&self, at: &FieldPath) -> Vec<ConfigIssue> {
        let mut issues = Vec::new();
        if self.floor == 0 {
            issues.push(
                ConfigIssue::new(Code::NegotiationFloorInvalid, at.key("floor"), "`floor` is 0; it must be > 0")
                    .with_help("use the least output worth generating, e.g. 500"),
            );
        }
        issues
    }
}

ctx_spec::setters!(NegotiationConfig { safety_margin: usize, floor: usize });

impl Default for NegotiationConfig {
    fn default() -> Self {
        NegotiationConfig { safety_margin: Self::DEFAULT_SAFETY_MARGIN, floor: Self::DEFAULT_FLOOR }
    }
}

/// What to negotiate for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct NegotiationRequest {
    /// The model name (used for the window when `context_window` is `None`).
    pub model: String,
    /// The window from the model configuration; `None` looks the model up in ctx's model table ([`crate::tokens::MODEL_TABLE`]).
    pub context_window: Option<usize>,
    /// The output the caller asked for.
    pub requested_max_tokens: usize,
    /// The system prompt, sent first.
    pub system_prompt: Option<String>,
    /// Memories, sent as one system message after the system prompt: `Relevant memories:`, then
    /// one `- ` line per memory.
    pub memories: Vec<String>,
    /// Earlier conversation, oldest first; the only part that may be trimmed.
    pub history: Vec<ChatMessage>,
    /// This turn's messages (the user's question), sent last and never trimmed.
    pub pending: Vec<ChatMessage>,
    /// Tool schemas sent with the request.
    pub tools: Vec<ToolSchema>,
    /// Margin and floor.
    pub config: NegotiationConfig,
}

ctx_spec::setters!(NegotiationRequest {
    model: String,
    requested_max_tokens: usize,
    context_window: Option<usize>,
    system_prompt: Option<String>,
    memories: Vec<String>,
    history: Vec<ChatMessage>,
    pending: Vec<ChatMessage>,
    tools: Vec<ToolSchema>,
    config: NegotiationConfig,
});

impl NegotiationRequest {
    /// A request for `requested_max_tokens` of output from `model`, with nothing in it yet.
    pub fn new(model: impl Into<String>, requested_max_tokens: usize) -> Self {
        NegotiationRequest {
            model: model.into(),
            context_window: None,
            requested_max_tokens,
            system_prompt: None,
            memories: Vec::new(),
            history: Vec::new(),
            pending: Vec::new(),
            tools: Vec::new(),
            config: NegotiationConfig::default(),
        }
    }
}

/// What negotiation decided, for traces and the caller's records.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct NegotiationMeta {
    /// The model.
    pub model: String,
    /// The window used.
    pub context_window: usize,
    /// Exact tokens of the request as sent (after any trimming).
    pub input_tokens: usize,
    /// The output asked for.
    pub requested_max_tokens: usize,
    /// The output granted.
    pub adjusted_max_tokens: usize,
    /// Whether less was granted than asked for.
    pub reduced: bool,
    /// Oldest history messages dropped to make room for the floor.
    pub history_messages_dropped: usize,
    /// The margin used.
    pub safety_margin: usize,
    /// The floor used (the configured floor, or the request when smaller).
    pub floor: usize,
}

/// A request that fits: the exact messages to send and the output they leave room for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Negotiated {
    /// The messages, exactly as counted.
    pub messages: Vec<ChatMessage>,
    /// The tool schemas, exactly as counted.
    pub tools: Vec<ToolSchema>,
    /// The output limit to send.
    pub max_output_tokens: usize,
    /// How it was decided.
    pub meta: NegotiationMeta,
}

impl Negotiated {
    /// The model request, carrying the predicted prompt tokens for comparison with the server's.
    pub fn into_chat_request(self) -> ChatRequest {
        ChatRequest {
            messages: self.messages,
            tools: self.tools,
            max_tokens: self.max_output_tokens,
            params: crate::llm::ModelParams::default(),
            predicted_prompt_tokens: Some(self.meta.input_tokens),
            step_id: None,
        }
    }
}

/// Why no request could be negotiated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NegotiationError {
    /// Counting failed, or the model is unknown and no window was given.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The caller asked for no output at all.
    #[error("model `{model}`: `max_tokens` is 0; ask for at least one output token")]
    ZeroRequested {
        /// The model.
        model: String,
    },
    /// Even with the whole history dropped, the rest of the request leaves no room for the floor.
    #[error(
        "model `{model}`: the request without history is {fixed_input} tokens; with the {safety_margin}-token \
         margin and the {floor}-token output floor it needs {needed} of the {context_window}-token window; \
         shorten the system prompt, memories, tools or question, or use a model with a larger window"
    )]
    NoRoomForFloor {
        /// The model.
        model: String,
        /// The window.
        context_window: usize,
        /// Exact tokens of the request without any history.
        fixed_input: usize,
        /// The margin.
        safety_margin: usize,
        /// The floor.
        floor: usize,
        /// `fixed_input + safety_margin + floor`.
        needed: usize,
    },
}

impl ErrorCode for NegotiationError {
    fn code(&self) -> Code {
        match self {
            NegotiationError::Token(e) => e.code(),
            NegotiationError::ZeroRequested { .. } => Code::NegotiationZeroOutput,
            NegotiationError::NoRoomForFloor { .. } => Code::NegotiationNoRoom,
        }
    }
}

/// The system message that carries `memories`, or `None` when there are none.
fn render_memories(memories: &[String]) -> Option<ChatMessage> {
    if memories.is_empty() {
        return None;
    }
    let mut text = String::from(MEMORIES_HEADING);
    for memory in memories {
        text.push_str("\n- ");
        text.push_str(memory);
    }
    Some(ChatMessage::system(text))
}

/// Negotiates the output limit of `req` (see the module documentation).
///
/// ```
/// use ctx::negotiate::{NegotiationRequest, negotiate_max_output};
/// use ctx::{ChatMessage, Encoding, TokenCounter};
///
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// let mut req = NegotiationRequest::new("gpt-4", 3_000); // an 8,192-token window
/// req.system_prompt = Some("You answer briefly.".into());
/// req.pending = vec![ChatMessage::user("What is BPE?")];
/// let n = negotiate_max_output(&req, &counter)?;
/// assert_eq!(n.max_output_tokens, 3_000);
/// assert_eq!(n.meta.input_tokens, counter.count_request(&n.messages, &n.tools)?);
/// # Ok::<(), ctx::negotiate::NegotiationError>(())
/// ```
pub fn negotiate_max_output(req: &NegotiationRequest, counter: &TokenCounter) -> Result<Negotiated, NegotiationError> {
    if req.requested_max_tokens == 0 {
        return Err(NegotiationError::ZeroRequested { model: req.model.clone() });
    }
    let window = match req.context_window {
        Some(w) => w,
        None => ModelInfo::lookup(&req.model)?.context_window,
    };
    let margin = req.config.safety_margin;
    // At least one output token whatever the configured floor, never more than was asked for.
    let floor = req.config.floor.max(1).min(req.requested_max_tokens);

    let mut head: Vec<ChatMessage> = Vec::new();
    head.extend(req.system_prompt.as_ref().map(|s| ChatMessage::system(s.clone())));
    head.extend(render_memories(&req.memories));
    let assemble =
        |kept: &[ChatMessage]| -> Vec<ChatMessage> { head.iter().chain(kept).chain(&req.pending).cloned().collect() };

    let mut messages = assemble(&req.history);
    let mut input = counter.count_request(&messages, &req.tools)?;
    let mut dropped = 0usize;
    if input.saturating_add(margin).saturating_add(floor) > window {
        let fixed_input = counter.count_request(&assemble(&[]), &req.tools)?;
        let needed = fixed_input.saturating_add(margin).saturating_add(floor);
        if needed > window {
            return Err(NegotiationError::NoRoomForFloor {
                model: req.model.clone(),
                context_window: window,
                fixed_input,
                safety_margin: margin,
                floor,
                needed,
            });
        }
        let mut history_budget = window - needed;
        loop {
            // A leading system message in the history is never trimmed: when it alone is over
            // the budget, the count below reports the request as it is.
            let trim: HistoryTrim = trim_after_system(&req.history, history_budget, counter)?;
            messages = assemble(&trim.kept(&req.history));
            input = counter.count_request(&messages, &req.tools)?;
            dropped = trim.removed;
            let total = input.saturating_add(margin).saturating_add(floor);
            if total <= window || trim.first_kept >= req.history.len() {
                break;
            }
            // The history's own count and the request's disagree: tighten by the difference.
            history_budget = history_budget.saturating_sub(total - window);
        }
        if input.saturating_add(margin).saturating_add(floor) > window {
            return Err(NegotiationError::NoRoomForFloor {
                model: req.model.clone(),
                context_window: window,
                fixed_input: input,
                safety_margin: margin,
                floor,
                needed: input.saturating_add(margin).saturating_add(floor),
            });
        }
    }

    let available = window.saturating_sub(input.saturating_add(margin));
    let adjusted = floor.max(req.requested_max_tokens.min(available));
    let meta = NegotiationMeta {
        model: req.model.clone(),
        context_window: window,
        input_tokens: input,
        requested_max_tokens: req.requested_max_tokens,
        adjusted_max_tokens: adjusted,
        reduced: adjusted < req.requested_max_tokens,
        history_messages_dropped: dropped,
        safety_margin: margin,
        floor,
    };
    if meta.reduced || dropped > 0 {
        tracing::warn!(
            target: "ctx::negotiate",
            model = %meta.model,
            context_window = window,
            input_tokens = input,
            requested = meta.requested_max_tokens,
            adjusted,
            history_messages_dropped = dropped,
            "output limit reduced to fit the window"
        );
    } else {
        tracing::info!(
            target: "ctx::negotiate",
            model = %meta.model,
            context_window = window,
            input_tokens = input,
            requested = meta.requested_max_tokens,
            adjusted,
            "output limit negotiated"
        );
    }
    Ok(Negotiated { messages, tools: req.tools.clone(), max_output_tokens: adjusted, meta })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    fn counter() -> TokenCounter {
        TokenCounter::for_encoding(Encoding::Cl100kBase)
    }

    #[test]
    fn a_zero_floor_is_an_issue() {
        let config = NegotiationConfig { safety_margin: 100, floor: 0 };
        let issues = config.validate(&FieldPath::root().key("negotiation"));
        let found: Vec<(&str, String)> = issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect();
        assert_eq!(found, [("NEGOTIATION_FLOOR_INVALID", "negotiation.floor".to_owned())]);
        assert!(NegotiationConfig { floor: 1, ..config }.validate(&FieldPath::root()).is_empty());
    }

    #[test]
    fn unknown_model_without_window_is_an_error() {
        let req = NegotiationRequest::new("llama3.2:3b", 100);
        let err = negotiate_max_output(&req, &counter()).unwrap_err();
        assert_eq!(err.code(), "UNKNOWN_MODEL");
        assert!(err.to_string().contains("llama3.2:3b"));
        let ok = NegotiationRequest { context_window: Some(128_000), ..req };
        assert_eq!(negotiate_max_output(&ok, &counter()).unwrap().max_output_tokens, 100);
    }

    #[test]
    fn window_comes_from_the_model_table() {
        let req = NegotiationRequest::new("gpt-4", 100_000);
        let n = negotiate_max_output(&req, &counter()).unwrap();
        assert_eq!(n.meta.context_window, 8192);
        // Empty request: only the reply priming (3 tokens).
        assert_eq!(n.meta.input_tokens, 3);
        assert_eq!(n.max_output_tokens, 8192 - 3 - 100);
        assert!(n.meta.reduced);
    }

    #[test]
    fn a_small_request_is_not_raised_to_the_floor() {
        let req = NegotiationRequest { context_window: Some(1000), ..NegotiationRequest::new("m", 50) };
        let n = negotiate_max_output(&req, &counter()).unwrap();
        assert_eq!((n.max_output_tokens, n.meta.floor, n.meta.reduced), (50, 50, false));
        let no_floor = NegotiationRequest {
            context_window: Some(103),
            config: NegotiationConfig { floor: 0, safety_margin: 100 },
            ..req.clone()
        };
        // 3 tokens of reply priming + 100 margin fill the window: the one-token floor cannot fit.
        assert_eq!(negotiate_max_output(&no_floor, &counter()).unwrap_err().code(), "NEGOTIATION_NO_ROOM");
        let zero = NegotiationRequest { requested_max_tokens: 0, ..req };
        assert_eq!(negotiate_max_output(&zero, &counter()).unwrap_err().code(), "NEGOTIATION_ZERO_OUTPUT");
    }

    #[test]
    fn memories_are_one_system_message() {
        let m = render_memories(&["likes tea".into(), "lives in Brno".into()]).unwrap();
        assert_eq!(m.content, "Relevant memories:\n- likes tea\n- lives in Brno");
        assert!(render_memories(&[]).is_none());
        assert_eq!(NegotiationConfig { floor: 0, safety_margin: 0 }.validate(&FieldPath::root()).len(), 1);
        assert!(NegotiationConfig::default().validate(&FieldPath::root()).is_empty());
    }
}
