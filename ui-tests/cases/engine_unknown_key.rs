// Keys are the spec's: a misspelt one is named, with the closest known key.
ctx::context_engine! {
    fn help_centre {
        contexts {
            support {
                inputs: [question],
                policy { input_budget { max_token: 200 } },
                messages: [user: "Question: {input.question}"],
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
