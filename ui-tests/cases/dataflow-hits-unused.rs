// A model request never shows search hits, only fetched texts: a search followed by the answer
// and no fetch is an error at the search step.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: answer },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
