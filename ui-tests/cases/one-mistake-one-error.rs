// One mistake in the pipeline is one error, even though the code below uses every part of the
// generated API: on error the macro still emits it all (with bodies that are never run).
use ctx::llm::ChatModelDyn;
use ctx::pipeline::{NodeSearchDyn, NodeStoreDyn};
use ctx::{CtxError, PipelineState, pipeline::BoxError};

ctx::pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: route },
            route: custom { outcomes { short => answer, done => answr } },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

pub struct Steps;

impl QaCustom for Steps {
    async fn route(&self, _state: &mut PipelineState) -> Result<QaRouteOutcome, BoxError> {
        Ok(QaRouteOutcome::Done)
    }
}

pub async fn ask(search: &dyn NodeSearchDyn, store: &dyn NodeStoreDyn, model: &dyn ChatModelDyn) -> Result<String, CtxError> {
    assert_eq!(QaStep::FIRST, QaStep::Search);
    assert!(Qa::MERMAID.is_empty() || Qa::NAME == "Qa");
    let qa = Qa::new()?;
    let env = QaEnv { search, store, model, custom: &Steps };
    let mut state = PipelineState::new("How are invoices totalled?");
    let next = qa.step(QaStep::FIRST, &mut state, &env).await?;
    let (state, reports) = qa.run(state, &env).await?;
    Ok(format!("{next} {} {}", reports.len(), state.last_model_response.unwrap_or_default()))
}

fn main() {}
