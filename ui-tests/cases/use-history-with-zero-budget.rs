// `use_history: true` with a history budget of 0: no history could ever be sent.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000, max_history_tokens: 0 }
        prompts { answer: "Answer the question from the context." }
        steps {
            answer: call_model { prompt_key: answer, use_history: true, next: end },
        }
    }
}

fn main() {}
