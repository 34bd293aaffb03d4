// Explicit pack ratios may not promise more than the whole pack room.
ctx::context_engine! {
    fn help_centre {
        retrievers {
            kb_search { query: "{input.question}", limit: 3 },
            faq_search { query: "{input.question}", limit: 3 },
        }
        contexts {
            support {
                inputs: [question],
                messages: [
                    context: kb_search { ratio: 0.6 },
                    context: faq_search { ratio: 0.6 },
                    user: "Question: {input.question}",
                ],
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
