// An explicitly empty `user_parts` would send an empty user message; leaving the key out sends
// the context and the question.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 4_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            answer: call_model { prompt_key: answer, user_parts: [], next: end },
        }
    }
}

fn main() {}
