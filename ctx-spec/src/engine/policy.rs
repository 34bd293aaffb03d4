//! The typed policy the assembler runs with, resolved from a validated
//! [`ContextPolicySpec`], and the one rule for pack ratios.

use super::declaration::TRUNCATE;
use super::declaration::{ContextDeclaration, ContextPolicySpec};

/// What to do when content does not fit its budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Overflow {
    /// Trim history oldest-first, then compact packs with the policy's compactor.
    Compact,
    /// Fail with a typed error naming what did not fit.
    #[default]
    Error,
}

impl Overflow {
    /// The accepted keywords.
    pub const KEYWORDS: [&'static str; 2] = ["compact", "error"];

    /// The overflow for a keyword.
    pub fn parse(keyword: &str) -> Option<Self> {
        match keyword {
            "compact" => Some(Overflow::Compact),
            "error" => Some(Overflow::Error),
            _ => None,
        }
    }
}

/// Paging of retrievers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Expansion {
    /// The most requests per pack (>= 1).
    pub max_pages: usize,
    /// Paging stops once a pack holds this share of its allocation.
    pub min_fill_ratio: f64,
}

/// A validated policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `input_budget.max_tokens`, when bounded.
    pub max_tokens: Option<usize>,
    /// The overflow behaviour.
    pub overflow: Overflow,
    /// The compactor's registered name.
    pub compactor: String,
    /// Paging; `None` means one page per pack.
    pub expansion: Option<Expansion>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy { max_tokens: None, overflow: Overflow::Error, compactor: TRUNCATE.to_owned(), expansion: None }
    }
}

impl Policy {
    /// The typed policy of a spec that passed validation. Values validation rejects are mapped to
    /// the nearest safe setting rather than panicking, so this never fails.
    pub fn from_spec(spec: &ContextPolicySpec) -> Self {
        Policy {
            max_tokens: spec.input_budget.as_ref().map(|b| usize::try_from(b.max_tokens).unwrap_or(0)),
            overflow: spec.overflow.as_deref().and_then(Overflow::parse).unwrap_or_default(),
            compactor: spec.compactor.as_ref().map_or_else(|| TRUNCATE.to_owned(), |c| c.name.clone()),
            expansion: spec.expansion.as_ref().map(|e| Expansion {
                max_pages: usize::try_from(e.max_pages).unwrap_or(1).max(1),
                min_fill_ratio: e.min_fill_ratio,
            }),
        }
    }
}

/// The effective ratio of every pack of `decl`, in directive order: its own ratio, else its
/// policy's `pack_budget.default_ratio`, else an equal share of what the explicit ratios leave.
/// `pack_budget` is a declaration's own: a nested context does not inherit its parent's.
pub fn pack_ratios(decl: &ContextDeclaration) -> Vec<f64> {
    let default_ratio = decl.policy.as_ref().and_then(|p| p.pack_budget.as_ref()).and_then(|b| b.default_ratio);
    let explicit: f64 = decl.packs().filter_map(|(_, c)| c.ratio).sum();
    let unratioed = decl.packs().filter(|(_, c)| c.ratio.is_none()).count();
    let share = default_ratio.unwrap_or_else(|| ((1.0 - explicit) / unratioed.max(1) as f64).max(0.0));
    decl.packs().map(|(_, c)| c.ratio.unwrap_or(share)).collect()
}

/// Tokens a ratio gives out of `room`, rounded down.
pub fn allocation(room: usize, ratio: f64) -> usize {
    if ratio.is_nan() || ratio <= 0.0 {
        return 0;
    }
    // A float product of a token count and a ratio <= 1 is exact enough; clamp for safety.
    ((room as f64) * ratio.min(1.0)).floor() as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::declaration::{ContextInsert, MessageSpec, PackBudgetSpec};

    fn decl(ratios: &[Option<f64>], default_ratio: Option<f64>) -> ContextDeclaration {
        ContextDeclaration {
            name: "c".into(),
            inputs: vec![],
            policy: Some(ContextPolicySpec {
                pack_budget: Some(PackBudgetSpec { default_ratio }),
                ..Default::default()
            }),
            messages: ratios
                .iter()
                .enumerate()
                .map(|(i, r)| MessageSpec::Context(ContextInsert { ratio: *r, ..ContextInsert::new(format!("p{i}")) }))
                .collect(),
        }
    }

    #[test]
    fn ratios_resolve_explicit_default_and_shared() {
        assert_eq!(pack_ratios(&decl(&[Some(0.5), None], Some(0.25))), [0.5, 0.25]);
        assert_eq!(pack_ratios(&decl(&[Some(0.5), None, None], None)), [0.5, 0.25, 0.25]);
        assert_eq!(pack_ratios(&decl(&[None], None)), [1.0]);
        assert_eq!(pack_ratios(&decl(&[Some(1.0), None], None)), [1.0, 0.0]);
    }

    #[test]
    fn allocation_rounds_down_and_rejects_nonpositive() {
        assert_eq!(allocation(41, 0.5), 20);
        assert_eq!(allocation(10, 1.0), 10);
        assert_eq!(allocation(10, 0.0), 0);
        assert_eq!(allocation(10, f64::NAN), 0);
        assert_eq!(allocation(10, 7.0), 10);
    }

    #[test]
    fn policy_defaults_to_error_and_truncate() {
        let p = Policy::from_spec(&ContextPolicySpec::default());
        assert_eq!(p, Policy::default());
        assert_eq!(Overflow::parse("compact"), Some(Overflow::Compact));
        assert_eq!(Overflow::parse("compress"), None);
    }
}
