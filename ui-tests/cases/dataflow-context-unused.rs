// A declared context no step assembles: a warning, made an error here so that the case records
// it.
#![deny(deprecated)]
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context." }
        contexts {
            contexts {
                support {
                    inputs: [user_question],
                    policy { input_budget { max_tokens: 4_000 } },
                    messages: [user: "{input.user_question}"],
                }
            }
        }
        steps {
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
