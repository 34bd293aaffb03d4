// A step's `max_output_tokens` larger than the whole window is reported under that value.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 4_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            answer: call_model { prompt_key: answer, max_output_tokens: 10_000, next: end },
        }
    }
}

fn main() {}
