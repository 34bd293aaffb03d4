// A pack's ratio is a share of the pack room: it must be in (0, 1].
ctx::context_engine! {
    fn help_centre {
        retrievers { kb_search { query: "{input.question}", limit: 3 } }
        contexts {
            support {
                inputs: [question],
                messages: [
                    system: "Answer from the articles.",
                    context: kb_search { ratio: 1.5 },
                    user: "Question: {input.question}",
                ],
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
