//! The token budget contract between the model's limits, the pipeline's settings and its
//! `call_model` steps: no request may need more than the model's context window.
//!
//! For each `call_model` step:
//!
//! ```text
//! fixed_prompt_tokens(step) + max_history_tokens + max_context_tokens + Σ input budgets
//!     + max_output_tokens(step) + budget_safety_margin_tokens  <=  model_context_window
//! ```
//!
//! - [`InputBudget`]: the budget of every run-time value a step renders besides the context (the
//!   question: `max_question_tokens`; each variable: `max_variable_tokens`; an earlier reply: the
//!   largest output limit), so the proof holds for every input a run accepts.
//!
//! - [`max_output_tokens`]: the step's output limit (`max_output_tokens`, then `max_tokens`,
//!   then the model's `max_tokens`).
//! - [`fixed_prompt_tokens`]: system prompt + user templates with empty `{}` + chat overhead,
//!   counted exactly.
//! - [`check_contract`]: the inequality for every step, under `fail_fast` or `auto_clamp`.
//! - [`guard_request`]: the last check of the exact request before it is sent.
//!
//! An `agent` step is checked as a `call_model` step whose requests also carry its tool schemas,
//! counted exactly with the chat format's tool rule ([`StepBudget::tool_schema_tokens`]); its
//! report also gives the turn budget in effect and the most requests one visit makes
//! ([`StepBudget::turn_budget_tokens`], [`StepBudget::max_model_requests`]), and a declared
//! `turn_budget_tokens` must leave the output, the margin, the tools and the reply priming their
//! room (`TURN_BUDGET_EXCEEDS_ROOM`).
//!
//! A step whose request is the assembly of a declared context of the context engine has one input
//! term instead of the fixed prompt, the history and `max_context_tokens`: the context's
//! `input_budget.max_tokens`, which bounds everything the engine assembles ([`CallModelCheck::with_context`]).
//!
//! Everything here is a plain function over plain values, free of I/O and async, so the
//! `pipeline!` macro runs the same check at compile time when the window and prompts are literals.
//!
//! ```
//! use ctx::config::{ModelConfig, Settings};
//! use ctx::contract::{call_model_checks, check_contract, pipeline_uses_history};
//! use ctx::definition::*;
//! use ctx::FieldPath;
//!
//! let def = PipelineDef::new("Qa").model(ModelSource::Inline(ModelSpec::default().model(Some("gpt-4".into())).max_tokens(Some(512)))).settings(SettingsSpec::default().max_context_tokens(Some(5_000)).max_history_tokens(Some(1_000))).prompts(vec![PromptSpec::new("answer", Some("Answer from the context.".into()))]).steps(vec![StepDef::new("answer", StepKind::CallModel(CallModelSpec::new("answer", END).user_parts(vec![UserPartSpec::new("context_blocks", "{}")]).use_history(true)))]);
//! let ModelSource::Inline(spec) = &def.model else { unreachable!() };
//! let model = ModelConfig::from_spec(spec, &FieldPath::root().key("model")).unwrap();
//! let settings =
//!     Settings::from_spec(&def.settings, pipeline_uses_history(&def), &FieldPath::root().key("settings")).unwrap();
//! let prompts = Default::default();
//! let checks = call_model_checks(&def, &prompts).unwrap();
//! let report = check_contract(&model, &settings, &checks, &model.counter()).unwrap();
//! assert!(report.step("answer").unwrap().total_tokens() <= 8_192);
//! ```

#[doc(inline)]
pub use ctx_runtime::contract::{
    BudgetOrigin, CallModelCheck, Clamp, ClampTarget, ContextTerm, ContractError, ContractReport, CostBound,
    InputBudget, OutputSource, StepBudget, StepCost, StepModel, Unpaid, billed, call_model_checks, check_contract,
    cost_bound, fixed_prompt_tokens, guard_request, loop_limit, max_output_tokens, nano_usd, pipeline_uses_history,
    proof_statement, usd,
};
