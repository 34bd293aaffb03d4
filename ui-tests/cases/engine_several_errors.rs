// Every problem at once, each under its own token; the function is still emitted, so the call in
// `main` type-checks and adds no error of its own.
ctx::context_engine! {
    fn help_centre {
        retrievers { kb_search { query: "{input.topic}", limit: 0 } }
        contexts {
            support {
                inputs: [question],
                policy {
                    input_budget { max_tokens: 0 },
                    pack_budget { default_ratio: 0.7 },
                    overflow: compress,
                },
                messages: [
                    context: kb_search,
                    context: faq,
                    history,
                    user: "Question: {input.question}",
                ],
            }
            faq {
                inputs: [question],
                messages: [system: "FAQ", history, context: support],
            }
        }
    }
}

fn main() {
    let spec: ctx::engine::EngineSpec = help_centre();
    let _ = spec.contexts.len();
}
