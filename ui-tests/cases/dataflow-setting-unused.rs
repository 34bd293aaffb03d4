// A history budget no step uses (no `use_history: true`) and a loop limit no loop_guard reads:
// warnings, made errors here so that the case records them.
#![deny(deprecated)]
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000, max_history_tokens: 2_000, max_turn_loops: 3 }
        prompts { answer: "Answer the question from the context." }
        steps {
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
