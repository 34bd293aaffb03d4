//! The run-time inputs of a model request and their budgets: every value a step's `user_parts`
//! put into its user message is a term of the contract inequality, so that the window proof and
//! the cost bound hold for every input a run accepts.
//!
//! ```text
//! fixed_prompt_tokens + tool_schema_tokens + max_history_tokens + max_context_tokens
//!     + Σ input budgets (one per user_parts value outside the context)
//!     + max_output_tokens + budget_safety_margin_tokens  <=  model_context_window
//! ```
//!
//! Each source has one budget ([`InputBudget`]), and where it comes from ([`BudgetOrigin`]):
//!
//! * the question (`user_question`, `user_question_en`): `settings.max_question_tokens`;
//! * a variable: `settings.max_variable_tokens`, the budget of each variable a step renders;
//! * `last_model_response`: derived, the largest output limit of the pipeline's model steps (a
//!   reply is at most its step's output limit);
//! * `context_blocks`: `max_context_tokens`, the context term itself (a step that renders the
//!   context twice carries a second term);
//! * `budget_remaining_usd`: derived, [`BUDGET_REMAINING_TOKENS`] (the longest dollar amount the
//!   run can print).
//!
//! A budget that is not declared (`max_question_tokens`, `max_variable_tokens` left out) is the
//! room the window leaves: the least, over the steps that render such an input, of what the
//! window leaves after every other term, shared evenly among the undeclared inputs of that step
//! ([`BudgetOrigin::Default`]). The proof then still holds for every input within it, and `ctx
//! explain` says that the budget is the default. A step that leaves no room is an issue
//! (`INPUT_BUDGET_NO_ROOM`).
//!
//! At run time each value is counted exactly, with the counter of the step's model, and a value
//! over its budget is refused before the request that would carry it, the question before any
//! request of the run (`PIPELINE_INPUT_OVER_BUDGET`), so no request carries more than the
//! contract proved. A step whose request is a declared context's assembly has no such terms: the
//! context's input budget bounds everything it assembles.

use super::cost::{CostBound, usd};
pub use super::input_budget::{
    BUDGET_REMAINING_TOKENS, BudgetOrigin, InputBudget, InputKind, MAX_QUESTION_TOKENS, MAX_VARIABLE_TOKENS,
};
use super::report::ContractReport;
use crate::pipeline::definition::CallModelSpec;

/// One input term of a step before the undeclared budgets are known.
#[derive(Debug, Clone)]
pub(crate) enum Pending {
    /// Its budget is known: declared or derived.
    Known(InputBudget),
    /// Its budget is the default, with the key that would declare it.
    Default { source: String, setting: &'static str },
}

/// What the contract knows of the pipeline's declared and derived budgets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Declared<'a> {
    pub(crate) question: Option<usize>,
    pub(crate) variable: Option<usize>,
    pub(crate) max_context_tokens: usize,
    /// The largest output limit of the pipeline's model steps, with the step that has it.
    pub(crate) largest_output: Option<(usize, &'a str)>,
}

/// The input terms of `spec`'s user message: one per `user_parts` value outside the context
/// term (the first `context_blocks` is that term).
pub(crate) fn pending_inputs(spec: &CallModelSpec, declared: &Declared<'_>) -> Vec<Pending> {
    let mut context_seen = false;
    let mut out = Vec::new();
    for part in spec.parts() {
        let source = part.source.clone();
        let known = |tokens, origin| Pending::Known(InputBudget::new(source.clone(), tokens, origin));
        let declared_or_default = |value: Option<usize>, setting: &'static str| match value {
            Some(tokens) => known(tokens, BudgetOrigin::Declared { setting }),
            None => Pending::Default { source: source.clone(), setting },
        };
        out.push(match InputKind::of(&part.source) {
            InputKind::Context if !context_seen => {
                context_seen = true;
                continue;
            }
            InputKind::Context => known(
                declared.max_context_tokens,
                BudgetOrigin::Derived { by: "`max_context_tokens`, a second time".to_owned() },
            ),
            InputKind::Question => declared_or_default(declared.question, MAX_QUESTION_TOKENS),
            InputKind::Variable => declared_or_default(declared.variable, MAX_VARIABLE_TOKENS),
            InputKind::LastModelResponse => match declared.largest_output {
                Some((tokens, step)) => known(
                    tokens,
                    BudgetOrigin::Derived {
                        by: format!("the largest output limit of the pipeline's model steps (step `{step}`'s)"),
                    },
                ),
                // No model step with an output limit: its own issue is reported.
                None => known(0, BudgetOrigin::Derived { by: "no model step has an output limit".to_owned() }),
            },
            InputKind::BudgetRemaining => known(
                BUDGET_REMAINING_TOKENS,
                BudgetOrigin::Derived { by: "the longest amount in dollars the run can print".to_owned() },
            ),
        });
    }
    out
}

/// The sum of the known budgets of `inputs` and the number of undeclared ones.
pub(crate) fn known_sum(inputs: &[Pending]) -> (u128, usize) {
    inputs.iter().fold((0, 0), |(sum, n), p| match p {
        Pending::Known(b) => (sum + b.tokens as u128, n),
        Pending::Default { .. } => (sum, n + 1),
    })
}

/// `inputs` with each undeclared budget set to `default` (set by step `step`).
pub(crate) fn resolve(inputs: &[Pending], default: Option<(usize, &str)>) -> Vec<InputBudget> {
    inputs
        .iter()
        .map(|p| match p {
            Pending::Known(b) => b.clone(),
            Pending::Default { source, setting } => {
                let (tokens, step) = default.unwrap_or((0, ""));
                InputBudget::new(source.clone(), tokens, BudgetOrigin::Default { setting, step: step.to_owned() })
            }
        })
        .collect()
}

/// The proof a contract (and, with a price, its cost bound) states, with its assumptions, as
/// `ctx explain` prints it: "for any question up to 2,000 tokens (`max_question_tokens`) and any
/// tool results: every request ≤ its window (the largest: 7,900 of 8,192 tokens, step `answer`);
/// the run ≤ $0.0213 (3 model requests)", then what it assumes.
pub fn proof_statement(report: &ContractReport, cost: Option<&CostBound>) -> Vec<String> {
    let mut given: Vec<String> = report
        .inputs
        .iter()
        .map(|b| {
            let what = match InputKind::of(&b.source) {
                InputKind::Question => "question".to_owned(),
                InputKind::Variable => format!("value of variable `{}`", b.source),
                _ => format!("`{}`", b.source),
            };
            format!("any {what} up to {} tokens ({})", b.tokens, b.origin.describe())
        })
        .collect();
    if report.steps.iter().any(|s| s.turn_budget_tokens.is_some()) {
        given.push("any tool results (an agent's turn holds them to its turn budget)".to_owned());
    }
    let given = if given.is_empty() { "every run".to_owned() } else { format!("for {}", given.join(", ")) };
    let largest = report
        .steps
        .iter()
        .max_by_key(|s| (s.worst_request_tokens as u128 * 1_000_000) / s.context_window.max(1) as u128);
    let requests = match largest {
        Some(s) => format!(
            "every request fits its window (the fullest: step `{}`, {} of {} tokens at most)",
            s.step_id, s.worst_request_tokens, s.context_window
        ),
        None => "no model request".to_owned(),
    };
    let run = match cost {
        Some(c) => format!(
            "; a run costs at most {} ({} model request{}{}){}",
            usd(c.nano_usd),
            c.requests,
            if c.requests == 1 { "" } else { "s" },
            if c.exact { "" } else { ", an upper bound" },
            // A branch left unpaid is so only for a run that starts with an empty context.
            match c.seeded_nano_usd {
                Some(seeded) => format!(
                    " when it starts with an empty context, as a conversation starts each question; {} when its \
                     caller fills the context first (`on_over` of {} is then possible)",
                    usd(seeded),
                    c.never_taken_on_over.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
                ),
                None => String::new(),
            }
        ),
        None => String::new(),
    };
    let mut lines = vec![format!("{given}: {requests}{run}.")];
    lines.push(format!(
        "assumed: prompt counts {} with each step's tokenizer; inputs over their budgets are refused before a \
         request carries them; budget_safety_margin_tokens covers where values meet their templates{}",
        report.counting,
        if cost.is_some() { "; the provider bills the tokens ctx counts, at the declared price" } else { "" }
    ));
    lines
}

#[cfg(test)]
#[path = "inputs_tests.rs"]
mod contract_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::definition::UserPartSpec;

    fn declared(question: Option<usize>) -> Declared<'static> {
        Declared { question, variable: Some(30), max_context_tokens: 1_000, largest_output: Some((400, "draft")) }
    }

    fn spec(sources: &[&str]) -> CallModelSpec {
        CallModelSpec::new("p", "end").user_parts(sources.iter().map(|s| UserPartSpec::new(*s, "{}")).collect())
    }

    #[test]
    fn every_value_outside_the_context_term_is_a_term() {
        let s = spec(&["context_blocks", "user_question_en", "ticket", "last_model_response", "context_blocks"]);
        let inputs = pending_inputs(&s, &declared(Some(500)));
        let resolved = resolve(&inputs, None);
        let got: Vec<(&str, usize)> = resolved.iter().map(|b| (b.source.as_str(), b.tokens)).collect();
        assert_eq!(
            got,
            [("user_question_en", 500), ("ticket", 30), ("last_model_response", 400), ("context_blocks", 1_000)]
        );
        assert_eq!(known_sum(&inputs), (1_930, 0));
        assert_eq!(resolved[0].origin, BudgetOrigin::Declared { setting: "max_question_tokens" });
        assert!(resolved[2].origin.describe().contains("step `draft`'s"), "{:?}", resolved[2].origin);
    }

    #[test]
    fn an_undeclared_question_waits_for_the_room_the_window_leaves() {
        // The default parts: the context (its own term), then the question.
        let inputs = pending_inputs(&CallModelSpec::new("p", "end"), &declared(None));
        assert_eq!(known_sum(&inputs), (0, 1));
        let resolved = resolve(&inputs, Some((1_234, "answer")));
        assert_eq!(resolved.len(), 1);
        assert_eq!((resolved[0].source.as_str(), resolved[0].tokens), ("user_question_en", 1_234));
        assert!(resolved[0].origin.is_default());
        assert_eq!(
            resolved[0].origin.describe(),
            "the default: the room step `answer` leaves, as `max_question_tokens` is not set"
        );
    }

    #[test]
    fn the_remaining_budget_text_fits_its_bound() {
        let longest = crate::contract::usd(u64::MAX);
        let text = longest.trim_start_matches('$');
        assert_eq!(text, "18446744073.709551615");
        assert!(text.len() < BUDGET_REMAINING_TOKENS && "unlimited".len() < BUDGET_REMAINING_TOKENS);
        for encoding in [crate::tokens::Encoding::Cl100kBase, crate::tokens::Encoding::O200kBase] {
            let counter = crate::tokens::TokenCounter::for_encoding(encoding);
            assert!(counter.count(text).unwrap() <= BUDGET_REMAINING_TOKENS);
        }
    }
}
