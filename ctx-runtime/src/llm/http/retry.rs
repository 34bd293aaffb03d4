//! The retry driver: the attempts of one logical request under a [`RetryPolicy`], for every
//! client (each model call, each `count_tokens` call).
//!
//! backon runs the attempts and computes the exponential, jittered schedule; this adds what is
//! specific to model servers: only [retryable](ModelError::is_retryable) errors are retried, an
//! attempt may forbid the next one (a stream that already delivered text), a 429's `Retry-After`
//! replaces the computed wait (and one longer than the policy accepts ends the retries), and a
//! retryable error returned after several attempts says how many there were.

use std::future::Future;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable, Sleeper};

use super::RetryPolicy;
use crate::codes::ErrorCode;
use crate::llm::ModelError;

/// How an attempt failed: its error, and whether another attempt may follow.
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) error: ModelError,
    /// `false` forbids another attempt whatever the error (text already reached the caller).
    pub(crate) may_retry: bool,
}

impl From<ModelError> for Failed {
    fn from(error: ModelError) -> Self {
        Failed { error, may_retry: true }
    }
}

/// Runs `attempt` until it succeeds or the policy says stop, sleeping on tokio's timer between
/// attempts; the result of the last attempt.
pub(crate) async fn retrying<T, Fut>(
    policy: &RetryPolicy,
    model: &str,
    attempt: impl FnMut() -> Fut,
) -> Result<T, ModelError>
where
    Fut: Future<Output = Result<T, Failed>>,
{
    retrying_with(policy, model, tokio::time::sleep, attempt).await
}

/// [`retrying`] with the sleeper given (a test's records the waits).
async fn retrying_with<T, Fut>(
    policy: &RetryPolicy,
    model: &str,
    sleeper: impl Sleeper,
    attempt: impl FnMut() -> Fut,
) -> Result<T, ModelError>
where
    Fut: Future<Output = Result<T, Failed>>,
{
    let mut retries = 0u32;
    let outcome = attempt
        .retry(schedule(policy))
        .sleep(sleeper)
        .when(|failed: &Failed| failed.may_retry && failed.error.is_retryable())
        .adjust(|failed: &Failed, computed: Option<Duration>| wait(policy, model, &failed.error, computed))
        .notify(|failed: &Failed, delay: Duration| {
            retries = retries.saturating_add(1);
            tracing::warn!(
                target: "ctx::llm",
                model,
                attempt = retries,
                code = failed.error.code().as_str(),
                wait_ms = delay.as_millis(),
                "model request failed, retrying: {}",
                failed.error
            );
        })
        .await;
    outcome.map_err(|failed| give_up(model, retries.saturating_add(1), failed.error))
}

/// backon's schedule for `policy`: the wait before retry `n` (from 1) is
/// `initial_backoff * 2^(n-1)` capped at `max_backoff`, plus with `jitter` a random extra of up to
/// the same amount; `max_retries` waits at the most.
fn schedule(policy: &RetryPolicy) -> ExponentialBuilder {
    let builder = ExponentialBuilder::default()
        .with_min_delay(policy.initial_backoff)
        .with_max_delay(policy.max_backoff)
        .with_factor(2.0)
        .with_max_times(usize::try_from(policy.max_retries).unwrap_or(usize::MAX));
    if policy.jitter { builder.with_jitter() } else { builder }
}

/// The wait before the next attempt after `err`: the server's `Retry-After` when it gave one
/// within the policy's limit, else the `computed` one; `None` (give up) when the schedule is
/// spent or the server asks for longer than the policy accepts.
fn wait(policy: &RetryPolicy, model: &str, err: &ModelError, computed: Option<Duration>) -> Option<Duration> {
    let computed = computed?;
    match err.retry_after() {
        Some(asked) if asked > policy.max_retry_after => {
            tracing::warn!(
                target: "ctx::llm",
                model,
                asked_ms = asked.as_millis(),
                max_ms = policy.max_retry_after.as_millis(),
                "the server asks for a longer wait than the retry policy accepts; giving up"
            );
            None
        }
        Some(asked) => Some(asked),
        None => Some(computed),
    }
}

/// The error to return after `attempts` attempts: a retryable error after several says how many
/// there were.
fn give_up(model: &str, attempts: u32, err: ModelError) -> ModelError {
    if attempts > 1 && err.is_retryable() {
        ModelError::RetriesExhausted { model: model.to_owned(), attempts, last: Box::new(err) }
    } else {
        err
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    fn server_error() -> ModelError {
        ModelError::Http { model: "m".into(), status: 503, message: "busy".into(), error_type: None, error_code: None }
    }

    fn limited(after: Option<Duration>) -> ModelError {
        ModelError::RateLimited { model: "m".into(), message: "slow".into(), retry_after: after }
    }

    fn policy(max_retries: u32) -> RetryPolicy {
        RetryPolicy {
            max_retries,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(350),
            jitter: false,
            max_retry_after: Duration::from_secs(10),
        }
    }

    /// Runs attempts that fail with `failures` in turn (then succeed with the attempt's number);
    /// the result, how many attempts ran, and the waits between them.
    async fn run(policy: &RetryPolicy, failures: Vec<Failed>) -> (Result<usize, ModelError>, usize, Vec<Duration>) {
        let waits = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&waits);
        let sleeper = move |d: Duration| {
            recorded.lock().expect("not poisoned").push(d);
            std::future::ready(())
        };
        let mut failures = failures.into_iter();
        let mut attempts = 0;
        let result = retrying_with(policy, "m", sleeper, || {
            attempts += 1;
            let outcome = failures.next().map_or(Ok(attempts), Err);
            std::future::ready(outcome)
        })
        .await;
        let waits = waits.lock().expect("not poisoned").clone();
        (result, attempts, waits)
    }

    fn failing(n: usize) -> Vec<Failed> {
        (0..n).map(|_| Failed::from(server_error())).collect()
    }

    #[tokio::test]
    async fn exponential_waits_capped_then_gives_up_with_the_count() {
        let (result, attempts, waits) = run(&policy(4), failing(9)).await;
        // backon multiplies in f32: compare whole milliseconds.
        let waits: Vec<u128> = waits.iter().map(Duration::as_millis).collect();
        assert_eq!(waits, [100, 200, 350, 350]);
        assert_eq!(attempts, 5);
        match result {
            Err(ModelError::RetriesExhausted { attempts, last, .. }) => {
                assert_eq!(attempts, 5);
                assert_eq!(*last, server_error());
            }
            other => panic!("expected RetriesExhausted, got {other:?}"),
        }
        let (result, attempts, _) = run(&policy(4), failing(2)).await;
        assert_eq!((result, attempts), (Ok(3), 3));
    }

    #[tokio::test]
    async fn jitter_stays_within_one_extra_backoff() {
        let p = RetryPolicy { jitter: true, ..policy(3) };
        for _ in 0..50 {
            let (_, _, waits) = run(&p, failing(1)).await;
            let wait = waits[0];
            assert!(wait >= Duration::from_millis(100) && wait <= Duration::from_millis(200), "{wait:?}");
        }
    }

    #[tokio::test]
    async fn retry_after_replaces_the_backoff_within_the_limit() {
        let failures = vec![
            Failed::from(limited(Some(Duration::from_secs(2)))),
            Failed::from(limited(None)),
            Failed::from(limited(Some(Duration::from_secs(11)))),
        ];
        let (result, attempts, waits) = run(&policy(3), failures).await;
        // The server's wait exactly; then backon's (in f32: compare whole milliseconds).
        assert_eq!(waits[0], Duration::from_secs(2));
        assert_eq!(waits[1].as_millis(), 200);
        assert_eq!(waits.len(), 2);
        assert_eq!(attempts, 3);
        match result {
            Err(ModelError::RetriesExhausted { attempts: 3, last, .. }) => {
                assert_eq!(last.retry_after(), Some(Duration::from_secs(11)));
            }
            other => panic!("expected to give up, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn final_errors_and_forbidden_retries_come_back_unwrapped() {
        let ctx = ModelError::ContextLengthExceeded { model: "m".into(), message: "too long".into() };
        let (result, attempts, _) = run(&policy(3), vec![Failed::from(ctx.clone())]).await;
        assert_eq!((result, attempts), (Err(ctx), 1));
        let forbidden = Failed { error: server_error(), may_retry: false };
        let (result, attempts, _) = run(&policy(3), vec![forbidden]).await;
        assert_eq!((result, attempts), (Err(server_error()), 1));
        let (result, attempts, _) = run(&RetryPolicy::none(), failing(1)).await;
        assert_eq!((result, attempts), (Err(server_error()), 1));
        // Forbidden after a retry: the error says how many attempts there were.
        let failures = vec![Failed::from(server_error()), Failed { error: server_error(), may_retry: false }];
        let (result, attempts, _) = run(&policy(3), failures).await;
        assert_eq!(attempts, 2);
        assert!(matches!(result, Err(ModelError::RetriesExhausted { attempts: 2, .. })), "{result:?}");
    }
}
