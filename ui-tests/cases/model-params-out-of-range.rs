// Sampling parameters are checked where they are written, all at once: a temperature over 2, a
// `top_p` of 0, an empty stop sequence and a response format that does not exist.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 4_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            answer: call_model {
                prompt_key: answer,
                temperature: 2.5,
                top_p: 0,
                stop: ["###", ""],
                response_format: xml,
                next: end,
            },
        }
    }
}

fn main() {}
