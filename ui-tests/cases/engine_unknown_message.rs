// Messages are `system`, `user`, `assistant`, `context` and `history`; placements `message` and
// `variable`.
ctx::context_engine! {
    fn help_centre {
        retrievers { kb_search { query: "{input.question}", limit: 3 } }
        contexts {
            support {
                inputs: [question],
                messages: [
                    sytem: "You are a support agent.",
                    context: kb_search { placement: inline },
                    user: "Question: {input.question}",
                ],
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
