// A variable set and never read by any step: a warning (the caller may read `state.variables`
// after the run), made an error here so that the case records it.
#![deny(deprecated)]
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            note: set_variables { rules: [ topic = "invoices" ], next: answer },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
