// A pipeline without its model block.
use ctx_macros::pipeline;

pipeline! {
    pub pipeline Qa {
        prompts { answer: "Answer the question." }
        steps {
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
