// Each step's contract is checked against its own model's window: the summariser's small model
// cannot hold the context budget the strong one can.
use ctx::pipeline;

pipeline! {
    pub pipeline Tiered {
        model { model: "gpt-4o", max_tokens: 800 }
        models {
            small { context_window: 4_096, max_tokens: 200, encoding: cl100k_base },
        }
        settings { max_context_tokens: 6_000 }
        prompts { summarise: "Summarise the context.", answer: "Answer from the context." }
        steps {
            summarise: call_model { prompt_key: summarise, model: small, next: answer },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
