// Paging stops once a pack holds `min_fill_ratio` of its allocation: a share in (0, 1].
ctx::context_engine! {
    fn help_centre {
        retrievers { kb_search { query: "{input.question}", limit: 2 } }
        contexts {
            support {
                inputs: [question],
                policy {
                    input_budget { max_tokens: 200 },
                    expansion { max_pages: 3, min_fill_ratio: 1.2 },
                },
                messages: [context: kb_search, user: "Question: {input.question}"],
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
