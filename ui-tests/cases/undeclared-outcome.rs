// A custom step returns its generated outcome enum, which has exactly the declared outcomes:
// returning one the step does not declare does not compile.
use ctx::{PipelineState, pipeline::BoxError};

ctx::pipeline! {
    pub pipeline Router {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        steps {
            route: custom { outcomes { simple => finish, complex => finish } },
            finish: set_variables { rules: [ answered = true ], next: end },
        }
    }
}

pub struct Steps;

impl RouterCustom for Steps {
    async fn route(&self, _state: &mut PipelineState) -> Result<RouterRouteOutcome, BoxError> {
        Ok(RouterRouteOutcome::Maybe)
    }
}

fn main() {}
