// A `context` directive names a declared retriever or context; a typo gets a suggestion.
ctx::context_engine! {
    fn help_centre {
        retrievers { kb_search { query: "{input.question}", limit: 3 } }
        contexts {
            support {
                inputs: [question],
                messages: [context: kb_serch, user: "Question: {input.question}"],
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
