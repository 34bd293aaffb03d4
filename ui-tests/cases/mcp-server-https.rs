// An MCP server reached at an `https://` URL is refused where it is declared: ctx's MCP client
// speaks plain HTTP only, and the help names the two ways to reach such a server.
use ctx::pipeline;

pipeline! {
    pub pipeline Support {
        model { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 2_000 }
        prompts { answer: "Answer with the documents' tools." }
        steps {
            answer: agent {
                prompt_key: answer,
                mcp_servers: [ docs { url: "https://mcp.example.com/mcp" } ],
                max_tool_calls: 3,
                next: end,
            },
        }
    }
}

fn main() {}
