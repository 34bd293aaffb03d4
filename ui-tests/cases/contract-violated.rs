// prompt + history + context + output + margin must fit in the model window, counted with the real tokenizer.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000, max_history_tokens: 2_000, budget_safety_margin_tokens: 128 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: answer },
            answer: call_model { prompt_key: answer, max_output_tokens: 6_000, use_history: true, next: end },
        }
    }
}

fn main() {}
