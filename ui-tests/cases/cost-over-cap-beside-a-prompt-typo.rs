// Every mistake at once, across the rules: a misspelled prompt key leaves step `answer` without
// a contract, but step `draft` alone already costs more than `max_cost_per_run`, so the cap's
// error comes with the prompt's (the cost is then "at least" that much), not after it is fixed.
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
        prompts { draft: "Draft an answer from the context.", answer: "Answer the question from the context." }
        steps {
            draft: call_model {
                prompt_key: draft,
                max_output_tokens: 1_000,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: answer,
            },
            answer: call_model {
                prompt_key: anwser,
                max_output_tokens: 1_000,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", last_model_response => "### Draft:\n{}\n\n" ],
                next: end,
            },
        }
    }
}

fn main() {}
