// A pipeline without its model block.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question." }
        steps {
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
