// A step that renders the question with no `max_question_tokens` gives it the room the window
// leaves; when its other budgets fill the window exactly, no question would fit: one error at the
// step, asking for a declared budget.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 4_096, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 3_440, budget_safety_margin_tokens: 128 }
        prompts { answer: "Answer from the context." }
        steps {
            answer: call_model {
                prompt_key: answer,
                max_output_tokens: 512,
                user_parts: [ context_blocks => "{}", user_question => "{}" ],
                next: end,
            },
        }
    }
}

fn main() {}
