// call_model assembles a context that the pipeline's `contexts` does not declare.
use ctx::pipeline;

pipeline! {
    pub pipeline Desk {
        model { context_window: 4_096, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 1_000 }
        prompts { answer: "You are a support agent." }
        steps {
            answer: call_model { prompt_key: answer, context: suport, next: end },
        }
        contexts {
            contexts {
                support {
                    inputs: [user_question],
                    policy { input_budget { max_tokens: 2_000 } },
                    messages: [user: "Question: {input.user_question}"],
                }
            }
        }
    }
}

fn main() {}
