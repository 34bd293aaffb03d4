// A JSON schema response format is parsed when compiled: a schema that is not an object schema,
// and a name the API refuses, are reported under their values.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 4_000 }
        prompts { answer: "Reply in JSON." }
        steps {
            answer: call_model {
                prompt_key: answer,
                response_format: json_schema { name: "the answer", schema: r#"{"type":"array"}"# },
                next: end,
            },
        }
    }
}

fn main() {}
