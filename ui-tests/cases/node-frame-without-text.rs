// A node frame that would leave every node's text out of the context.
use ctx::pipeline;

pipeline! {
    pub pipeline Docs {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000, node_frame: "<doc id=\"{id}\" path=\"{path}\"/>" }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: manage },
            manage: manage_context_budget { on_ok: answer, on_over: answer },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
