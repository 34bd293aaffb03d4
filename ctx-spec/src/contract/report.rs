//! What a contract check that passed hands back: each model step's terms with the limits in
//! effect ([`StepBudget`]), every clamp `auto_clamp` made ([`Clamp`]) and the whole
//! [`ContractReport`] that loading, `ctx explain` and the cost bound read.
//!
//! The results live apart from the check that fills them: the cost bound and the proof statement
//! read a report without needing the check, and the check needs them, so the report is the floor
//! both stand on.

use serde::Serialize;

use super::input_budget::InputBudget;
use super::terms::OutputSource;
use crate::config::{LimitsPolicy, Settings};
use crate::tokens::Counting;
use crate::validation::FieldPath;

/// One step's terms of the inequality, with the limits in effect (after any clamp).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StepBudget {
    /// The step id.
    pub step_id: String,
    /// The step's path.
    pub at: FieldPath,
    /// System prompt + empty user templates + chat overhead, counted exactly.
    pub fixed_prompt_tokens: usize,
    /// `max_history_tokens` when the step uses history, else 0.
    pub history_tokens: usize,
    /// `max_context_tokens` in effect.
    pub context_tokens: usize,
    /// The output limit in effect: send this as the request's `max_tokens`.
    pub output_tokens: usize,
    /// The output limit as configured, before any clamp.
    pub requested_output_tokens: usize,
    /// Which setting gave the output limit.
    pub output_source: OutputSource,
    /// `budget_safety_margin_tokens`.
    pub safety_margin_tokens: usize,
    /// The window of the step's model.
    pub context_window: usize,
    /// The step's named model (`model: NAME`), `None` for the default `model`.
    pub model: Option<String>,
    /// The exact cost of an agent step's tool schemas (the chat format's tool rule); 0 for
    /// `call_model`.
    pub tool_schema_tokens: usize,
    /// The most model requests one visit of the step makes: 1, or `max_tool_calls + 1`.
    pub max_model_requests: usize,
    /// An agent step's turn budget in effect: `turn_budget_tokens`, else what the window leaves
    /// after the output, the margin, the tool schemas and the reply priming.
    pub turn_budget_tokens: Option<usize>,
    /// The budgets of the values the step's user message carries besides the context (the
    /// question, variables, …), one per `user_parts` entry, in order ([`super::inputs`]).
    pub inputs: Vec<InputBudget>,
    /// Their sum: the input term of the inequality.
    pub input_tokens: usize,
    /// What an empty request costs in the chat format (the reply priming): an agent's later
    /// requests carry it beside the turn's messages.
    pub reply_priming_tokens: usize,
    /// The most one request of the step can need, prompt, output and margin: [`Self::total_tokens`]
    /// for `call_model`; for an `agent`, whose later requests also carry the turn's tool calls
    /// and results, the larger of that and the turn budget with the tool schemas, the margin and
    /// the output, never more than the window ([`super::worst_input_tokens`]). What `ctx explain`
    /// draws and the cost bound prices.
    pub worst_request_tokens: usize,
}

impl StepBudget {
    /// The left side of the inequality (at most [`Self::context_window`] in a report).
    pub fn total_tokens(&self) -> usize {
        self.fixed_prompt_tokens
            .saturating_add(self.tool_schema_tokens)
            .saturating_add(self.history_tokens)
            .saturating_add(self.context_tokens)
            .saturating_add(self.input_tokens)
            .saturating_add(self.output_tokens)
            .saturating_add(self.safety_margin_tokens)
    }

    /// Tokens of the window the worst case leaves unused.
    pub fn headroom(&self) -> usize {
        self.context_window.saturating_sub(self.total_tokens())
    }
}

/// What `auto_clamp` lowered, serialised as the setting's name (`max_context_tokens`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClampTarget {
    /// The pipeline's `max_context_tokens`.
    MaxContextTokens,
    /// One step's output limit.
    MaxOutputTokens,
}

/// One in-memory change made by `auto_clamp`; each is also logged as a `tracing` warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Clamp {
    /// What was lowered.
    pub target: ClampTarget,
    /// The step that forced it (for the context budget: the step leaving it the least room).
    pub step_id: String,
    /// The configured value.
    pub before: usize,
    /// The value in effect.
    pub after: usize,
    /// Why, with the numbers.
    pub reason: String,
}

/// The outcome of a contract check that passed (possibly after clamping).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ContractReport {
    /// The policy it was checked under.
    pub policy: LimitsPolicy,
    /// The model's window.
    pub context_window: usize,
    /// `max_context_tokens` in effect: use this budget in `manage_context_budget`.
    pub max_context_tokens: usize,
    /// Every `call_model` step, in the order given.
    pub steps: Vec<StepBudget>,
    /// Every clamp, in the order made; empty under `fail_fast`.
    pub clamps: Vec<Clamp>,
    /// Whether the prompt counts are exact or estimated with a margin (a Claude model counted
    /// with a declared tokenizer); shown with the table wherever it is printed.
    pub counting: Counting,
    /// The budget of every run-time input some step renders, once per source (the question, each
    /// rendered variable, …): what a run's values are checked against before a request carries
    /// them.
    pub inputs: Vec<InputBudget>,
}

impl ContractReport {
    /// The budget of step `step_id`.
    pub fn step(&self, step_id: &str) -> Option<&StepBudget> {
        self.steps.iter().find(|s| s.step_id == step_id)
    }

    /// The budget of the run-time input `source` (`user_question`, a variable, …), when a step
    /// renders it.
    pub fn input(&self, source: &str) -> Option<&InputBudget> {
        self.inputs.iter().find(|b| b.source == source)
    }

    /// The budget of the question (`user_question`, else `user_question_en`), when a step
    /// renders it.
    pub fn question(&self) -> Option<&InputBudget> {
        self.input("user_question").or_else(|| self.input("user_question_en"))
    }

    /// `settings` with the limits in effect (the clamped `max_context_tokens`).
    pub fn effective_settings(&self, settings: &Settings) -> Settings {
        Settings { max_context_tokens: self.max_context_tokens, ..settings.clone() }
    }
}
