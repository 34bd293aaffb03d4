// The worst case of a run, proven when compiling, over `settings.max_cost_per_run`: one error at
// the cap, with the arithmetic and the step that dominates. (The same pipeline with the cap at
// its bound compiles: tests/cost_bound.rs.) The question's budget is priced as input, with the
// context's.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model {
            context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base,
            price { input: 2.50, output: 10.00 },
        }
        settings {
            max_context_tokens: 9_000,
            max_question_tokens: 2_000,
            budget_safety_margin_tokens: 128,
            max_cost_per_run: 0.01,
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

fn main() {}
