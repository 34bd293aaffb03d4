// A policy's compactor is built in (truncate, sql, dotnet, code) or declared in `compactors`.
ctx::context_engine! {
    fn help_centre {
        compactors: [summarize],
        contexts {
            support {
                inputs: [question],
                policy { input_budget { max_tokens: 200 }, overflow: compact, compactor: sumarize },
                messages: [user: "Question: {input.question}"],
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
