// A prompt no step uses: a warning (a base file shared through `extends` may declare it for
// another pipeline), made an error here so that the case records it.
#![deny(deprecated)]
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context.", summarizer: "Summarise the context." }
        steps {
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
