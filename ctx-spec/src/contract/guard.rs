//! The last guard: the exact request is counted, and refused when it cannot fit.
//!
//! The contract works with budgets and a fixed prompt measured with empty templates; BPE is not
//! additive across the seams where state is put into the templates, and history or tools can
//! change between steps. So every request is counted as the exact messages and tools it sends,
//! chat overhead included, right before it is sent; one that would overflow never leaves.

use super::ContractError;
use crate::chat::{ChatMessage, ToolSchema};
use crate::tokens::TokenCounter;

/// Counts the request `messages` + `tools` exactly and checks that it plus `max_output_tokens`
/// fits `context_window`. Returns the prompt's token count (to send along and compare with the
/// server's usage), or a [`ContractError`] naming the step, the prompt, the output, the window
/// and the overflow.
///
/// ```
/// use ctx::contract::{guard_request, ContractError};
/// use ctx::{ChatMessage, Encoding, TokenCounter};
///
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// let messages = [ChatMessage::system("Be brief."), ChatMessage::user("Hello")];
/// let prompt = guard_request("answer", &messages, &[], 100, 4096, &counter).unwrap();
/// let err = guard_request("answer", &messages, &[], 4096 - prompt + 1, 4096, &counter).unwrap_err();
/// assert!(matches!(err, ContractError::RequestTooLarge { overflow: 1, .. }));
/// ```
pub fn guard_request(
    step_id: &str,
    messages: &[ChatMessage],
    tools: &[ToolSchema],
    max_output_tokens: usize,
    context_window: usize,
    counter: &TokenCounter,
) -> Result<usize, ContractError> {
    if max_output_tokens == 0 {
        return Err(ContractError::NoOutput { step_id: step_id.to_owned() });
    }
    let prompt_tokens = counter
        .count_request(messages, tools)
        .map_err(|source| ContractError::Count { step_id: step_id.to_owned(), source })?;
    let total = prompt_tokens as u128 + max_output_tokens as u128;
    if total > context_window as u128 {
        let overflow = usize::try_from(total - context_window as u128).unwrap_or(usize::MAX);
        return Err(ContractError::RequestTooLarge {
            step_id: step_id.to_owned(),
            prompt_tokens,
            max_output_tokens,
            context_window,
            overflow,
        });
    }
    Ok(prompt_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::ErrorCode;
    use crate::tokens::Encoding;

    #[test]
    fn fits_exactly_at_the_window_and_not_one_more() {
        let c = TokenCounter::for_encoding(Encoding::O200kBase);
        let messages = [ChatMessage::system("You are terse."), ChatMessage::user("Name three primes.")];
        let prompt = c.count_request(&messages, &[]).unwrap();
        assert_eq!(guard_request("s", &messages, &[], 50, prompt + 50, &c), Ok(prompt));
        let err = guard_request("s", &messages, &[], 51, prompt + 50, &c).unwrap_err();
        assert_eq!(
            err,
            ContractError::RequestTooLarge {
                step_id: "s".into(),
                prompt_tokens: prompt,
                max_output_tokens: 51,
                context_window: prompt + 50,
                overflow: 1
            }
        );
        assert_eq!(err.code(), "REQUEST_EXCEEDS_CONTEXT_WINDOW");
        let text = err.to_string();
        for part in ["`s`", &prompt.to_string(), "51", &(prompt + 50).to_string(), "together 1 more"] {
            assert!(text.contains(part), "{part} missing from: {text}");
        }
    }

    #[test]
    fn zero_output_is_refused_and_huge_values_do_not_wrap() {
        let c = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let messages = [ChatMessage::user("hi")];
        assert_eq!(
            guard_request("s", &messages, &[], 0, 100, &c),
            Err(ContractError::NoOutput { step_id: "s".into() })
        );
        let err = guard_request("s", &messages, &[], usize::MAX, 100, &c).unwrap_err();
        assert!(matches!(err, ContractError::RequestTooLarge { .. }), "{err:?}");
    }
}
