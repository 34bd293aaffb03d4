// The pipeline has a `search_nodes` step, so its environment must hold a search backend: the
// generated `QaEnv` has a `search` field, and leaving it out does not compile.
use ctx::llm::ChatModelDyn;
use ctx::pipeline::NodeStoreDyn;
use ctx::{CtxError, PipelineState};

ctx::pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: answer },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

pub async fn ask(store: &dyn NodeStoreDyn, model: &dyn ChatModelDyn) -> Result<PipelineState, CtxError> {
    let qa = Qa::new()?;
    let env = QaEnv { store, model };
    Ok(qa.run(PipelineState::new("How are invoices totalled?"), &env).await?.0)
}

fn main() {}
