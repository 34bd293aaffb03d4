// Step ids, outcomes and tool names become Rust items (variants, methods). A keyword becomes a
// raw identifier (a tool `match` is `fn r#match`), but the five that have no raw form (`self`,
// `Self`, `super`, `crate`, `_`) cannot: each is an error at its name, not a tool without a
// method that fails at run time.
ctx::pipeline! {
    pub pipeline Names {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer." }
        steps {
            self: set_variables { rules: [ answered = true ], next: route },
            route: custom { outcomes { self => answer } },
            answer: agent {
                prompt_key: answer,
                tools: [ super { description: "Search", parameters: r#"{"type":"object"}"# } ],
                max_tool_calls: 2,
                next: end,
            },
        }
    }
}

fn main() {}
