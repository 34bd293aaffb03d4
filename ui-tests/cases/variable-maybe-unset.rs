// A variable read where no step has set it yet is valid (a resumed state may carry it) but fails
// the run with PIPELINE_MISSING_SOURCE when nothing did: a warning at the read (made an error
// here so that the case records it).
#![deny(deprecated)]
use ctx::pipeline;

pipeline! {
    pub pipeline Chat {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            restore: set_variables { rules: [ context_blocks <- carried_context | to_context_blocks ], next: answer },
            answer: call_model { prompt_key: answer, next: save },
            save: set_variables { rules: [ carried_context <- context_blocks ], next: end },
        }
    }
}

fn main() {}
