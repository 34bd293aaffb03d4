// `summarize → answer` with nothing between: the summary is replaced by the answer before any
// step reads it. A warning (a streaming sink may show the summary), made an error here so that
// the case records it.
#![deny(deprecated)]
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 6_000 }
        prompts { summarizer: "Summarise the context.", answer: "Answer the question from the context." }
        steps {
            summarize: call_model { prompt_key: summarizer, max_output_tokens: 500, next: answer },
            answer: call_model { prompt_key: answer, max_output_tokens: 500, next: end },
        }
    }
}

fn main() {}
