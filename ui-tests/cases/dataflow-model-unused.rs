// A named model no step names: a warning, made an error here so that the case records it.
#![deny(deprecated)]
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        models { small { context_window: 8_192, max_tokens: 512, encoding: cl100k_base } }
        settings { max_context_tokens: 4_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
