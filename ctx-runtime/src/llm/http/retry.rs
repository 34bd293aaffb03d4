//! The retry decision: after a failed attempt, wait how long — or give up with which error.
//!
//! The exponential, jittered schedule is `backon`'s; this adds what is specific to model
//! servers: a 429's `Retry-After` replaces the computed wait (and one longer than the policy
//! accepts ends the retries), only [retryable](ModelError::is_retryable) errors are retried, and
//! a caller may forbid a retry (a stream that already delivered text).

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};

use super::RetryPolicy;
use crate::codes::ErrorCode;
use crate::llm::ModelError;

/// Retry bookkeeping for one logical request.
#[derive(Debug)]
pub(crate) struct RetryState<'a> {
    policy: &'a RetryPolicy,
    model: &'a str,
    backoff: ExponentialBackoff,
    failures: u32,
}

impl<'a> RetryState<'a> {
    pub(crate) fn new(policy: &'a RetryPolicy, model: &'a str) -> Self {
        let mut builder = ExponentialBuilder::default()
            .with_min_delay(policy.initial_backoff)
            .with_max_delay(policy.max_backoff)
            .with_factor(2.0)
            .with_max_times(usize::try_from(policy.max_retries).unwrap_or(usize::MAX));
        if policy.jitter {
            builder = builder.with_jitter();
        }
        RetryState { policy, model, backoff: builder.build(), failures: 0 }
    }

    /// After an attempt failed with `err`: `Ok(wait)` to try again after `wait`, or the error to
    /// return. `may_retry = false` forbids another attempt whatever the error.
    pub(crate) fn after_failure(&mut self, err: ModelError, may_retry: bool) -> Result<Duration, ModelError> {
        self.failures = self.failures.saturating_add(1);
        if !err.is_retryable() || !may_retry {
            return Err(self.give_up(err));
        }
        let Some(computed) = self.backoff.next() else {
            return Err(self.give_up(err));
        };
        let wait = match err.retry_after() {
            Some(asked) if asked > self.policy.max_retry_after => {
                tracing::warn!(
                    target: "ctx::llm",
                    model = self.model,
                    asked_ms = asked.as_millis(),
                    max_ms = self.policy.max_retry_after.as_millis(),
                    "the server asks for a longer wait than the retry policy accepts; giving up"
                );
                return Err(self.give_up(err));
            }
            Some(asked) => asked,
            None => computed,
        };
        tracing::warn!(
            target: "ctx::llm",
            model = self.model,
            attempt = self.failures,
            code = err.code().as_str(),
            wait_ms = wait.as_millis(),
            "model request failed, retrying: {err}"
        );
        Ok(wait)
    }

    /// The error to return: a retryable error after several attempts says how many there were.
    fn give_up(&self, err: ModelError) -> ModelError {
        if self.failures > 1 && err.is_retryable() {
            ModelError::RetriesExhausted { model: self.model.to_owned(), attempts: self.failures, last: Box::new(err) }
        } else {
            err
        }
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn exponential_waits_capped_then_gives_up_with_the_count() {
        let p = policy(4);
        let mut state = RetryState::new(&p, "m");
        // backon multiplies in f32: compare whole milliseconds.
        let waits: Vec<u128> =
            (0..4).map(|_| state.after_failure(server_error(), true).expect("retry allowed").as_millis()).collect();
        assert_eq!(waits, [100, 200, 350, 350]);
        match state.after_failure(server_error(), true) {
            Err(ModelError::RetriesExhausted { attempts, last, .. }) => {
                assert_eq!(attempts, 5);
                assert_eq!(*last, server_error());
            }
            other => panic!("expected RetriesExhausted, got {other:?}"),
        }
    }

    #[test]
    fn jitter_stays_within_one_extra_backoff() {
        let p = RetryPolicy { jitter: true, ..policy(3) };
        for _ in 0..50 {
            let mut state = RetryState::new(&p, "m");
            let wait = state.after_failure(server_error(), true).expect("retry allowed");
            assert!(wait >= Duration::from_millis(100) && wait <= Duration::from_millis(200), "{wait:?}");
        }
    }

    #[test]
    fn retry_after_replaces_the_backoff_within_the_limit() {
        let p = policy(3);
        let mut state = RetryState::new(&p, "m");
        assert_eq!(state.after_failure(limited(Some(Duration::from_secs(2))), true), Ok(Duration::from_secs(2)));
        assert_eq!(state.after_failure(limited(None), true).map(|d| d.as_millis()), Ok(200));
        let too_long = limited(Some(Duration::from_secs(11)));
        match state.after_failure(too_long, true) {
            Err(ModelError::RetriesExhausted { last, .. }) => {
                assert_eq!(last.retry_after(), Some(Duration::from_secs(11)));
            }
            other => panic!("expected to give up, got {other:?}"),
        }
    }

    #[test]
    fn final_errors_and_forbidden_retries_come_back_unwrapped() {
        let p = policy(3);
        let mut state = RetryState::new(&p, "m");
        let ctx = ModelError::ContextLengthExceeded { model: "m".into(), message: "too long".into() };
        assert_eq!(state.after_failure(ctx.clone(), true), Err(ctx));
        let mut state = RetryState::new(&p, "m");
        assert_eq!(state.after_failure(server_error(), false), Err(server_error()));
        let none = RetryPolicy::none();
        let mut state = RetryState::new(&none, "m");
        assert_eq!(state.after_failure(server_error(), true), Err(server_error()));
    }
}
