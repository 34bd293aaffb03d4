// Expansion pages a retriever at least once.
ctx::context_engine! {
    fn help_centre {
        retrievers { kb_search { query: "{input.question}", limit: 2 } }
        contexts {
            support {
                inputs: [question],
                policy {
                    input_budget { max_tokens: 200 },
                    expansion { max_pages: 0, min_fill_ratio: 1.0 },
                },
                messages: [context: kb_search, user: "Question: {input.question}"],
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
