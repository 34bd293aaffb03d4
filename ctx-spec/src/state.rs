//! The pipeline state: every value the steps read and write, serializable so that a run can be
//! saved after any step and resumed.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::state`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::ChatMessage;

/// What separates two context blocks when `context_blocks` is rendered into a prompt.
pub const CONTEXT_BLOCK_SEPARATOR: &str = "\n\n";

/// The one rendering of `context_blocks` into prompt text, used by every step that budgets or
/// sends the context, so that what is counted is what is sent.
pub fn render_context_blocks(blocks: &[String]) -> String {
    blocks.join(CONTEXT_BLOCK_SEPARATOR)
}

/// The template value a model step's `user_parts` can read to tell the model what it may still
/// spend: the least of what the run and the conversation have left under their caps, in US
/// dollars (`0.0123`), or `unlimited` without a cap. Computed when the request is rendered; not a
/// field of the state, and not something `set_variables` can read or write.
pub const BUDGET_REMAINING_USD: &str = "budget_remaining_usd";

/// What model requests have cost so far, in billionths of a US dollar (only requests whose model
/// has a price are counted), and how each model's provider bills compared with ctx's counts. The
/// runtime's spend caps are checked against it before every request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SpendTotals {
    /// This run: reset when a run starts.
    #[serde(default)]
    pub run_nano_usd: u64,
    /// The conversation: every run since it started, carried from question to question.
    #[serde(default)]
    pub conversation_nano_usd: u64,
    /// For each model (a named model's name, or `default` for the pipeline's `model` block), the
    /// highest ratios of billed to counted tokens its provider's usage has shown in this
    /// conversation; a spend cap prices later requests with them. Carried from question to
    /// question, like `conversation_nano_usd`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub billed_ratios: BTreeMap<String, BilledRatios>,
}

crate::setters!(SpendTotals { run_nano_usd: u64, conversation_nano_usd: u64, billed_ratios: BTreeMap<String, BilledRatios> });

impl SpendTotals {
    /// Nothing spent, no ratio seen.
    pub fn is_zero(&self) -> bool {
        *self == SpendTotals::default()
    }

    /// Records a request that cost `nano_usd` (saturating).
    pub fn add(&mut self, nano_usd: u64) {
        self.run_nano_usd = self.run_nano_usd.saturating_add(nano_usd);
        self.conversation_nano_usd = self.conversation_nano_usd.saturating_add(nano_usd);
    }

    /// Records what `model`'s provider billed for one request against what ctx counted: `input`
    /// and `output` are each `(billed, counted)` tokens. Each ratio kept is the highest seen.
    pub fn observe(&mut self, model: &str, input: TokenRatio, output: TokenRatio) {
        let seen = self.billed_ratios.entry(model.to_owned()).or_default();
        seen.input = seen.input.max(input);
        seen.output = seen.output.max(output);
    }

    /// The ratios seen for `model`, if any.
    pub fn seen_ratios(&self, model: &str) -> BilledRatios {
        self.billed_ratios.get(model).copied().unwrap_or_default()
    }

    /// The totals a new run of the same conversation starts from: the run's spend at 0, the
    /// conversation's spend and the ratios seen kept.
    #[must_use]
    pub fn for_new_run(self) -> Self {
        SpendTotals { run_nano_usd: 0, ..self }
    }

    /// What a failed run leaves to its conversation: the conversation's spend and the ratios
    /// seen, taken from `failed`, the state the run stopped in (money that left is counted, and
    /// what a provider's bill showed is not forgotten); the run's own spend stays as it was.
    pub fn keep_conversation_of(&mut self, failed: &SpendTotals) {
        self.conversation_nano_usd = failed.conversation_nano_usd;
        self.billed_ratios = failed.billed_ratios.clone();
    }
}

/// A ratio of tokens a provider billed to tokens ctx counted, kept as the fraction
/// `billed / counted` so that it compares, scales and round-trips exactly. The default, `0 / 0`,
/// is no observation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TokenRatio {
    /// Tokens billed.
    pub billed: u64,
    /// Tokens ctx counted.
    pub counted: u64,
}

impl TokenRatio {
    /// `billed` tokens billed for `counted` tokens counted.
    pub fn new(billed: u64, counted: u64) -> Self {
        TokenRatio { billed, counted }
    }

    /// Whether it is an observation: something was counted (`0 / n` is one, `n / 0` is not).
    pub fn is_seen(&self) -> bool {
        self.counted > 0
    }

    /// The ratio as a number; 0 when nothing was counted.
    pub fn get(&self) -> f64 {
        if self.is_seen() { self.billed as f64 / self.counted as f64 } else { 0.0 }
    }

    /// The larger of the two ratios, compared exactly; an observation wins over none.
    #[must_use]
    pub fn max(self, other: TokenRatio) -> TokenRatio {
        match (self.is_seen(), other.is_seen()) {
            (_, false) => self,
            (false, true) => other,
            (true, true) => {
                let (a, b) = (self.billed as u128 * other.counted as u128, other.billed as u128 * self.counted as u128);
                if b > a { other } else { self }
            }
        }
    }

    /// `tokens` scaled by the ratio, rounded up, and never fewer than `tokens` (a provider that
    /// bills less than ctx counts is priced at ctx's count): the most a provider billing at
    /// this ratio can bill for `tokens` counted tokens.
    ///
    /// ```
    /// use ctx::state::TokenRatio;
    ///
    /// assert_eq!(TokenRatio::new(3, 2).scale(1_001), 1_502);
    /// assert_eq!(TokenRatio::new(1, 2).scale(1_001), 1_001);
    /// assert_eq!(TokenRatio::default().scale(7), 7);
    /// ```
    pub fn scale(&self, tokens: usize) -> usize {
        if !self.is_seen() || self.billed <= self.counted {
            return tokens;
        }
        let (n, d) = (tokens as u128 * self.billed as u128, self.counted as u128);
        usize::try_from(n.div_ceil(d)).unwrap_or(usize::MAX)
    }
}

/// The highest ratios of billed to counted tokens a model's provider has shown: input (the
/// prompt tokens it reported, cache reads and writes included, against ctx's exact count of the
/// prompt) and output (the completion tokens it reported against ctx's count of the reply's text
/// and tool-call arguments).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BilledRatios {
    /// Prompt tokens billed per prompt token counted.
    #[serde(default)]
    pub input: TokenRatio,
    /// Completion tokens billed per reply token counted.
    #[serde(default)]
    pub output: TokenRatio,
}

impl BilledRatios {
    /// The ratios `input` and `output`.
    pub fn new(input: TokenRatio, output: TokenRatio) -> Self {
        BilledRatios { input, output }
    }
}

/// A retrieved text waiting to be budgeted into the context (`state.node_texts`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NodeText {
    /// The node's id (a file, a symbol, a chunk).
    pub id: String,
    /// Where it comes from: a path or another source name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The text itself.
    pub text: String,
    /// Anything else the retriever knows (score, language hint, line range, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, Value>,
}

impl NodeText {
    /// A node with no path and no metadata.
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        NodeText { id: id.into(), path: None, text: text.into(), metadata: BTreeMap::new() }
    }

    /// This node with a path.
    #[must_use]
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The best-effort source of the node: its path, else a `path` or `source` metadata string.
    pub fn source(&self) -> Option<&str> {
        self.path
            .as_deref()
            .or_else(|| ["path", "source"].iter().find_map(|k| self.metadata.get(*k).and_then(Value::as_str)))
    }
}

/// A message addressed to a step (`target_step_id`) on a `topic`, e.g. a demand to compact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InboxMessage {
    /// The step that should receive it.
    pub target_step_id: String,
    /// What it is about (a `manage_context_budget` rule's `inbox_key`, for instance).
    pub topic: String,
    /// Optional payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<String>,
}

impl InboxMessage {
    /// A message without payload.
    pub fn new(target_step_id: impl Into<String>, topic: impl Into<String>) -> Self {
        InboxMessage { target_step_id: target_step_id.into(), topic: topic.into(), payload: None }
    }
}

/// A search hit produced by a `search_nodes` step (`state.search_results`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchHit {
    /// The node id.
    pub id: String,
    /// The retriever's score (higher is better). JSON has no NaN or infinity, so those are
    /// written as the strings `"NaN"`, `"inf"` and `"-inf"`: a snapshot holding one still loads.
    #[serde(with = "score_serde")]
    pub score: f64,
}

impl SearchHit {
    /// The node `id` found with `score`.
    pub fn new(id: impl Into<String>, score: f64) -> Self {
        SearchHit { id: id.into(), score }
    }
}

// A node's or a state's fields are set one by one on top of `new(...)`: the structs are
// `#[non_exhaustive]` (a new field is not a breaking change), so a struct literal is refused
// outside this crate.
crate::setters!(NodeText { path: Option<String>, metadata: BTreeMap<String, Value> });
crate::setters!(InboxMessage { payload: Option<String> });
crate::setters!(PipelineState {
    context_blocks: Vec<String>,
    node_texts: Vec<NodeText>,
    inbox: Vec<InboxMessage>,
    inbox_last_consumed: Vec<InboxMessage>,
    history_dialog: Vec<ChatMessage>,
    user_question: String,
    user_question_en: String,
    last_model_response: Option<String>,
    search_results: Vec<SearchHit>,
    variables: BTreeMap<String, Value>,
    loop_counts: BTreeMap<String, u32>,
    spend: SpendTotals,
});

/// Serde for a score that round-trips every `f64` bit for bit (finite values as JSON numbers,
/// with serde_json's `float_roundtrip`; the rest as strings).
mod score_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(score: &f64, s: S) -> Result<S::Ok, S::Error> {
        match *score {
            x if x.is_finite() => s.serialize_f64(x),
            x if x.is_nan() => s.serialize_str("NaN"),
            x if x > 0.0 => s.serialize_str("inf"),
            _ => s.serialize_str("-inf"),
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Number(f64),
        Text(String),
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Repr::deserialize(d)? {
            Repr::Number(x) => Ok(x),
            Repr::Text(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                other => Err(serde::de::Error::custom(format!("`{other}` is not a score"))),
            },
        }
    }
}

/// The kind of value a state field holds; the `pipeline!` macro checks `user_parts` sources and
/// `set_variables` targets against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A list of text blocks (`context_blocks`).
    TextList,
    /// Retrieved node texts.
    NodeTexts,
    /// One text.
    Text,
    /// An optional text.
    OptionalText,
    /// Chat messages.
    Messages,
    /// Inbox messages.
    Inbox,
    /// Search hits.
    SearchHits,
}

/// Everything a pipeline run reads and writes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PipelineState {
    /// The prompt context material, in order.
    #[serde(default)]
    pub context_blocks: Vec<String>,
    /// Retrieved texts waiting for `manage_context_budget`.
    #[serde(default)]
    pub node_texts: Vec<NodeText>,
    /// Messages not yet delivered to their step.
    #[serde(default)]
    pub inbox: Vec<InboxMessage>,
    /// The messages delivered to the step now running (consumed on its entry).
    #[serde(default)]
    pub inbox_last_consumed: Vec<InboxMessage>,
    /// The conversation so far.
    #[serde(default)]
    pub history_dialog: Vec<ChatMessage>,
    /// The user's question as asked.
    #[serde(default)]
    pub user_question: String,
    /// The user's question in English (defaults to the question itself when empty).
    #[serde(default)]
    pub user_question_en: String,
    /// The last model reply, if any.
    #[serde(default)]
    pub last_model_response: Option<String>,
    /// Node ids found by `search_nodes`, best first.
    #[serde(default)]
    pub search_results: Vec<SearchHit>,
    /// Named variables set by `set_variables` or custom steps.
    #[serde(default)]
    pub variables: BTreeMap<String, Value>,
    /// How many times each `loop_guard` has allowed a loop, by step id.
    #[serde(default)]
    pub loop_counts: BTreeMap<String, u32>,
    /// What this run and its conversation have spent on model requests. Kept even by a step
    /// that fails after a request was paid for: a retry must not spend it again unseen.
    #[serde(default, skip_serializing_if = "SpendTotals::is_zero")]
    pub spend: SpendTotals,
}

impl PipelineState {
    /// The built-in fields by name, with their kinds. The one list both the runtime and the
    /// `pipeline!` macro consult.
    pub const FIELDS: &'static [(&'static str, FieldKind)] = &[
        ("context_blocks", FieldKind::TextList),
        ("node_texts", FieldKind::NodeTexts),
        ("inbox", FieldKind::Inbox),
        ("inbox_last_consumed", FieldKind::Inbox),
        ("history_dialog", FieldKind::Messages),
        ("user_question", FieldKind::Text),
        ("user_question_en", FieldKind::Text),
        ("last_model_response", FieldKind::OptionalText),
        ("search_results", FieldKind::SearchHits),
    ];

    /// A state for a new question; set other fields with the setters named after them.
    ///
    /// ```
    /// use ctx::{ChatMessage, NodeText, PipelineState};
    ///
    /// let state = PipelineState::new("Why?")
    ///     .history_dialog(vec![ChatMessage::user("Hi"), ChatMessage::assistant("Hello")])
    ///     .node_texts(vec![NodeText::new("a.rs", "fn a() {}").with_path("src/a.rs")]);
    /// assert_eq!(state.history_dialog.len(), 2);
    /// ```
    pub fn new(question: impl Into<String>) -> Self {
        let q = question.into();
        PipelineState { user_question_en: q.clone(), user_question: q, ..Default::default() }
    }

    /// The kind of a built-in field, or `None` for an unknown name.
    pub fn field_kind(name: &str) -> Option<FieldKind> {
        Self::FIELDS.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }

    /// Moves every inbox message addressed to `step_id` into `inbox_last_consumed` (replacing
    /// what was there): a step's entry consumes its messages.
    pub fn consume_inbox(&mut self, step_id: &str) {
        let (mine, rest): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.inbox).into_iter().partition(|m| m.target_step_id == step_id);
        self.inbox = rest;
        self.inbox_last_consumed = mine;
    }

    /// The text of a field or variable as a `user_parts` source renders it: `context_blocks`
    /// through [`render_context_blocks`], texts as they are, an absent `last_model_response` as
    /// the empty string, a variable as its string (or JSON text when not a string). `None` when
    /// no field or variable has this name.
    pub fn render_source(&self, name: &str) -> Option<String> {
        Some(match name {
            "context_blocks" => render_context_blocks(&self.context_blocks),
            "user_question" => self.user_question.clone(),
            "user_question_en" => self.user_question_en.clone(),
            "last_model_response" => self.last_model_response.clone().unwrap_or_default(),
            _ => match self.variables.get(name)? {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
        })
    }

    /// Queues a message for a later step.
    pub fn enqueue(&mut self, message: InboxMessage) {
        self.inbox.push(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inbox_is_consumed_on_entry_and_only_for_its_step() {
        let mut s = PipelineState::new("q");
        s.enqueue(InboxMessage::new("a", "compact_sql"));
        s.enqueue(InboxMessage::new("b", "x"));
        s.consume_inbox("a");
        assert_eq!(s.inbox_last_consumed, vec![InboxMessage::new("a", "compact_sql")]);
        assert_eq!(s.inbox, vec![InboxMessage::new("b", "x")]);
        s.consume_inbox("a");
        assert!(s.inbox_last_consumed.is_empty());
    }

    #[test]
    fn state_round_trips_through_json() {
        let mut s = PipelineState::new("How is the total computed?");
        s.node_texts.push(NodeText::new("n1", "SELECT 1").with_path("a.sql"));
        s.variables.insert("lang".into(), Value::from("en"));
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<PipelineState>(&json).unwrap(), s);
        assert_eq!(s.node_texts[0].source(), Some("a.sql"));
        assert_eq!(PipelineState::field_kind("context_blocks"), Some(FieldKind::TextList));
        assert_eq!(PipelineState::field_kind("nope"), None);
    }

    #[test]
    fn the_highest_ratio_seen_is_kept_per_model_exactly_and_survives_a_new_run_and_json() {
        let mut spend = SpendTotals::default();
        assert!(spend.is_zero());
        spend.observe("default", TokenRatio::new(150, 100), TokenRatio::new(0, 0));
        // 3/2 and 6/4 are the same ratio; 299/200 is lower; 301/200 is higher.
        spend.observe("default", TokenRatio::new(299, 200), TokenRatio::new(40, 20));
        assert_eq!(spend.seen_ratios("default"), BilledRatios::new(TokenRatio::new(150, 100), TokenRatio::new(40, 20)));
        spend.observe("default", TokenRatio::new(301, 200), TokenRatio::new(1, 1));
        assert_eq!(spend.seen_ratios("default").input, TokenRatio::new(301, 200));
        assert_eq!(spend.seen_ratios("default").output.get(), 2.0);
        // A reply ctx counted nothing of is no observation; another model has its own ratios.
        spend.observe("small", TokenRatio::new(10, 10), TokenRatio::new(500, 0));
        assert!(!spend.seen_ratios("small").output.is_seen());
        assert_eq!(spend.seen_ratios("strong"), BilledRatios::default());
        assert!(!spend.is_zero(), "ratios alone are something to keep");
        // A new run keeps them; so does a failed run's conversation.
        spend.add(7);
        let next = spend.clone().for_new_run();
        assert_eq!((next.run_nano_usd, &next.billed_ratios), (0, &spend.billed_ratios));
        let mut kept = SpendTotals::default();
        kept.keep_conversation_of(&spend);
        assert_eq!((kept.run_nano_usd, kept.conversation_nano_usd, &kept.billed_ratios), (0, 7, &spend.billed_ratios));
        // JSON, and a state saved before the ratios existed.
        let mut state = PipelineState::new("q");
        state.spend = spend;
        let json = serde_json::to_string(&state).unwrap();
        assert_eq!(serde_json::from_str::<PipelineState>(&json).unwrap(), state);
        let old: PipelineState =
            serde_json::from_str(r#"{"spend":{"run_nano_usd":1,"conversation_nano_usd":2}}"#).unwrap();
        assert!(old.spend.billed_ratios.is_empty());
        // Scaling rounds up and never below the count, without overflow.
        assert_eq!(TokenRatio::new(u64::MAX, 1).scale(usize::MAX), usize::MAX);
        assert_eq!(TokenRatio::new(7, 3).scale(3), 7);
        assert_eq!(TokenRatio::new(7, 3).scale(4), 10);
        assert_eq!(TokenRatio::new(0, 3).scale(4), 4);
    }
}
