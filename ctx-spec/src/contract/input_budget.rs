//! One run-time input's budget, as the contract states it: what kind of `user_parts` source it is
//! ([`InputKind`]), how many tokens its value may count ([`InputBudget`]) and where that number
//! comes from ([`BudgetOrigin`]). The rules that find each step's inputs and settle the undeclared
//! budgets are in [`super::inputs`], which re-exports these names.
//!
//! They are a leaf so that the report and the cost bound can name an input's budget without
//! depending on the rules that compute it.

use serde::Serialize;

use crate::state::BUDGET_REMAINING_USD;

/// The most tokens the text of `budget_remaining_usd` can count: the longest it can be is
/// `18446744073.709551615` (the largest amount of billionths of a dollar, without the `$`), 21
/// ASCII characters, or `unlimited`; a token holds at least one byte, and one more covers a
/// tokenizer that puts a word-start token in front.
pub const BUDGET_REMAINING_TOKENS: usize = 22;

/// The settings key of the question's budget.
pub const MAX_QUESTION_TOKENS: &str = "max_question_tokens";
/// The settings key of each rendered variable's budget.
pub const MAX_VARIABLE_TOKENS: &str = "max_variable_tokens";

/// What a `user_parts` source is, for its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `user_question` or `user_question_en`.
    Question,
    /// `context_blocks`.
    Context,
    /// `last_model_response`.
    LastModelResponse,
    /// `budget_remaining_usd`.
    BudgetRemaining,
    /// Any other name: a variable.
    Variable,
}

impl InputKind {
    /// The kind of the source `name`.
    pub fn of(name: &str) -> InputKind {
        match name {
            "user_question" | "user_question_en" => InputKind::Question,
            "context_blocks" => InputKind::Context,
            "last_model_response" => InputKind::LastModelResponse,
            n if n == BUDGET_REMAINING_USD => InputKind::BudgetRemaining,
            _ => InputKind::Variable,
        }
    }
}

/// Where an input's budget comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "from")]
#[non_exhaustive]
pub enum BudgetOrigin {
    /// Declared in `settings` under this key.
    Declared {
        /// `max_question_tokens` or `max_variable_tokens`.
        setting: &'static str,
    },
    /// Not declared: the room the window leaves, set by the step that leaves the least.
    Default {
        /// The settings key that would declare it.
        setting: &'static str,
        /// The step whose room set it.
        step: String,
    },
    /// Bounded by another declaration, described here (`the largest output limit, step
    /// `answer`'s`).
    Derived {
        /// What bounds it.
        by: String,
    },
}

impl BudgetOrigin {
    /// The origin for messages: `max_question_tokens`, `the default: the room step `answer`
    /// leaves (set max_question_tokens to declare it)`, `derived: …`.
    pub fn describe(&self) -> String {
        match self {
            BudgetOrigin::Declared { setting } => format!("`{setting}`"),
            BudgetOrigin::Default { setting, step } => {
                format!("the default: the room step `{step}` leaves, as `{setting}` is not set")
            }
            BudgetOrigin::Derived { by } => by.clone(),
        }
    }

    /// Whether the budget is a default rather than declared or derived.
    pub fn is_default(&self) -> bool {
        matches!(self, BudgetOrigin::Default { .. })
    }
}

/// The budget of one run-time input: the most tokens its value may count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct InputBudget {
    /// The `user_parts` source (`user_question_en`, a variable's name, …).
    pub source: String,
    /// The most tokens its value may count, alone, with the counter of the step's model.
    pub tokens: usize,
    /// Where the budget comes from.
    pub origin: BudgetOrigin,
}

impl InputBudget {
    /// The budget `tokens` of `source`, from `origin`.
    pub fn new(source: impl Into<String>, tokens: usize, origin: BudgetOrigin) -> Self {
        InputBudget { source: source.into(), tokens, origin }
    }

    /// `question` / `variable `ticket`` / `last_model_response`, for messages.
    pub fn label(&self) -> String {
        match InputKind::of(&self.source) {
            InputKind::Question => format!("question (`{}`)", self.source),
            InputKind::Variable => format!("variable `{}`", self.source),
            _ => format!("`{}`", self.source),
        }
    }
}
