//! The worst-case cost of a run, proven when compiling, at its edge: the pipeline of
//! `ui-tests/cases/cost-over-cap.rs` (whose cap of $0.01 is a compile error showing a bound of
//! $0.03788) compiles with `max_cost_per_run` at exactly that bound, and the same definition a
//! billionth of a dollar under it is refused by the same rule. The bound holds for every question
//! up to `max_question_tokens`, priced as input like the context.

use ctx::definition::{ValidateOptions, validate_definition};
use ctx::pipeline::StepMachine;

ctx::pipeline! {
    /// One answer over a 9,000-token context and a question of up to 2,000 tokens: 11,152 input
    /// tokens and 1,000 output tokens at worst.
    pub pipeline AtTheCap {
        model {
            context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base,
            price { input: 2.50, output: 10.00 },
        }
        settings {
            max_context_tokens: 9_000,
            max_question_tokens: 2_000,
            budget_safety_margin_tokens: 128,
            max_cost_per_run: 0.03788,
        }
        prompts { answer: "Answer the question from the context." }
        steps {
            answer: call_model {
                prompt_key: answer,
                max_output_tokens: 1_000,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: end,
            },
        }
    }
}

#[test]
fn a_cap_at_the_bound_compiles_and_a_billionth_under_it_is_refused() {
    let def = AtTheCapStep::definition();
    assert_eq!(def.settings.max_cost_per_run, Some(0.03788));
    assert!(validate_definition(&def, &ValidateOptions::default()).is_empty());

    let mut under = def.clone();
    under.settings.max_cost_per_run = Some(0.037_879_999);
    let issues = validate_definition(&under, &ValidateOptions::default());
    let codes: Vec<&str> = issues.iter().map(|i| i.code.as_str()).collect();
    assert_eq!(codes, ["MAX_COST_PER_RUN_EXCEEDED"], "{issues:?}");
    assert!(issues[0].message.contains("can cost $0.03788 (1 model request)"), "{}", issues[0].message);
    assert!(issues[0].message.contains("(11,152 input × $2.50/M"), "{}", issues[0].message);
}
