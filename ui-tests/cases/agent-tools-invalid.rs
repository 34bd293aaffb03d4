// An agent's tools are checked when compiled, all at once: a schema that is not JSON, a tool
// declared twice, an empty description, and no room for even one tool call.
use ctx::pipeline;

pipeline! {
    pub pipeline Support {
        model { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 2_000 }
        prompts { answer: "Answer from the search results." }
        steps {
            answer: agent {
                prompt_key: answer,
                tools: [
                    search_docs { description: "Search the docs", parameters: r#"{"type":"object","properties":{"query":"#  },
                    search_docs { description: "", parameters: r#"{"type":"object"}"# },
                ],
                max_tool_calls: 0,
                next: end,
            },
        }
    }
}

fn main() {}
