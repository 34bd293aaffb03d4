// A type that does not implement the generated custom trait is one error, where it is put into
// the environment, saying which trait and which methods to write; the environment's later uses
// (the binding, the run, its `.await`) add none.
use ctx::{CtxError, PipelineState};

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

pub async fn ask() -> Result<PipelineState, CtxError> {
    let router = Router::new()?;
    let env = RouterEnv { custom: &Steps };
    let mut state = PipelineState::new("How are invoices totalled?");
    let next = router.step(RouterStep::FIRST, &mut state, &env).await?;
    assert_eq!(next, RouterStep::Finish);
    Ok(router.run(state, &env).await?.0)
}

fn main() {}
