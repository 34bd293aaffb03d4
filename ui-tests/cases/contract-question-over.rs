// The question is a term of the contract: `max_question_tokens` is added to every step that
// renders it (here the default user parts: the context, then the question), and a budget the
// window cannot hold is one error at the step, with the question's term in the arithmetic.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings {
            max_context_tokens: 9_000,
            max_history_tokens: 2_000,
            max_question_tokens: 4_000,
            budget_safety_margin_tokens: 128,
        }
        prompts { answer: "Answer the question from the context." }
        steps {
            answer: call_model { prompt_key: answer, max_output_tokens: 1_500, use_history: true, next: end },
        }
    }
}

fn main() {}
