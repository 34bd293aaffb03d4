// A value of the wrong type is reported once, under the value, with the form to write.
ctx::context_engine! {
    fn help_centre {
        retrievers { kb_search { query: "{input.question}", limit: "3" } }
        contexts {
            support {
                inputs: [question],
                policy { input_budget { max_tokens: 200 }, overflow: 3 },
                messages: [context: kb_search { ratio: half }, user: "Question: {input.question}"],
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
