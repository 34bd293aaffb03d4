// Each `custom` step is a method of the generated `RouterCustom` trait: an implementation that
// forgets one does not compile.
use ctx::{PipelineState, pipeline::BoxError};

ctx::pipeline! {
    pub pipeline Router {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        steps {
            route: custom { outcomes { simple => finish, complex => review } },
            review: custom { outcomes { done => finish } },
            finish: set_variables { rules: [ answered = true ], next: end },
        }
    }
}

pub struct Steps;

impl RouterCustom for Steps {
    async fn route(&self, state: &mut PipelineState) -> Result<RouterRouteOutcome, BoxError> {
        Ok(if state.user_question.len() > 80 { RouterRouteOutcome::Complex } else { RouterRouteOutcome::Simple })
    }
}

fn main() {}
