// Each tool of an agent step is a method of the generated tools trait: a tool without an
// implementation does not compile, and the error points at the tool in the pipeline.
use ctx::pipeline::{ToolOutput, ToolRequest};
use ctx::{pipeline, pipeline::BoxError};

pipeline! {
    pub pipeline Support {
        model { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 2_000 }
        prompts { answer: "Answer from the search results." }
        steps {
            answer: agent {
                prompt_key: answer,
                tools: [
                    search_docs { description: "Search the docs", parameters: r#"{"type":"object"}"# },
                    read_page { description: "Read a page", parameters: r#"{"type":"object"}"# },
                ],
                max_tool_calls: 2,
                next: end,
            },
        }
    }
}

struct Docs;

impl SupportTools for Docs {
    async fn search_docs(&self, _request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::Text(String::new()))
    }
}

fn main() {}
