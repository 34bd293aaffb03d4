//! Packing ranked documents into the room a retrieval call may still use.
//!
//! Whole documents go first, in rank order, each one that fits; then the best-ranked document that
//! did not fit is handled by the [`Partial`] policy (left out, truncated at a token boundary, or
//! compacted by the caller's [`Compactor`](crate::compact::Compactor)) in whatever room is left.
//! The decision for each piece rests on its own count, so the packed result is re-counted as one
//! rendered string — formatting and separators included — and shrunk until that exact count is
//! within the budget. A result can therefore never exceed the room it was packed for, however
//! large the documents are.

use std::collections::HashSet;

use super::error::TurnError;
use crate::compact::{CompactRequest, Compactor};
use crate::tokens::TokenCounter;
use ctx_spec::turn::DocumentFormat;

/// One retrieval result, in rank order with its peers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct RankedDocument {
    /// The document's stable id (the de-duplication key).
    pub id: String,
    /// Its text.
    pub text: String,
}

impl RankedDocument {
    /// A ranked document.
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        RankedDocument { id: id.into(), text: text.into() }
    }
}

/// The policy for the best document that does not fit whole, with what it needs to run.
#[derive(Clone, Copy)]
pub enum Partial<'a> {
    /// Leave it out.
    Skip,
    /// Keep a token-boundary prefix followed by the format's truncation marker.
    Truncate,
    /// Ask the compactor for a version that fits (a request with the document's id and the room
    /// as `max_tokens`); a compaction that still does not fit is truncated like
    /// [`Partial::Truncate`].
    Compact(&'a dyn Compactor),
}

impl std::fmt::Debug for Partial<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Partial::Skip => "Skip",
            Partial::Truncate => "Truncate",
            Partial::Compact(_) => "Compact(..)",
        })
    }
}

/// How a document made it into a packed result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inclusion {
    /// As retrieved.
    Whole,
    /// A token-boundary prefix of it.
    Truncated,
    /// The compactor's version; `truncated` when that version also had to be cut.
    Compacted {
        /// Whether the compacted text was cut to fit.
        truncated: bool,
    },
}

/// A document as it appears in a packed result.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct PackedDocument {
    /// The document's id.
    pub id: String,
    /// The text as included (the whole text, a prefix, or the compacted text).
    pub text: String,
    /// How it was included.
    pub inclusion: Inclusion,
}

/// What [`pack_documents`] produced.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Packed {
    /// The tool result content: the included documents rendered and joined.
    pub rendered: String,
    /// The exact token count of `rendered`; never more than `budget`.
    pub tokens: usize,
    /// The room it was packed for.
    pub budget: usize,
    /// The included documents: whole ones in rank order, then the partial one, if any.
    pub included: Vec<PackedDocument>,
    /// Ids skipped because they were already seen (in earlier calls or earlier in the list).
    pub duplicates: Vec<String>,
    /// Ids that did not fit.
    pub left_out: Vec<String>,
}

struct Piece {
    /// The separator (unless first) and the rendered block.
    text: String,
    doc: PackedDocument,
}

/// Packs `ranked` into at most `budget` tokens of rendered content.
///
/// Documents for which `seen` answers true, and repeats of an id within `ranked`, are skipped as
/// duplicates. Whole documents are packed in rank order while they fit; then the best-ranked
/// document that did not fit is offered to `partial` when at least `min_partial_tokens` (and at
/// least one token) of room are left. The result is confirmed on the exact count of the rendered
/// whole and shrunk (the partial document first, then the last whole one) until it fits.
pub fn pack_documents(
    ranked: &[RankedDocument],
    seen: &dyn Fn(&str) -> bool,
    budget: usize,
    format: &DocumentFormat,
    partial: Partial<'_>,
    min_partial_tokens: usize,
    counter: &TokenCounter,
) -> Result<Packed, TurnError> {
    let mut here: HashSet<&str> = HashSet::new();
    let mut duplicates = Vec::new();
    let mut left_out = Vec::new();
    let mut pieces: Vec<Piece> = Vec::new();
    let mut used = 0usize;
    let mut overflow: Option<&RankedDocument> = None;

    for doc in ranked {
        if seen(&doc.id) || !here.insert(doc.id.as_str()) {
            duplicates.push(doc.id.clone());
            continue;
        }
        let text = piece_text(format, pieces.is_empty(), &doc.id, &doc.text);
        match counter.count_up_to(&text, budget.saturating_sub(used))? {
            Some(n) => {
                used += n;
                let doc = PackedDocument { id: doc.id.clone(), text: doc.text.clone(), inclusion: Inclusion::Whole };
                pieces.push(Piece { text, doc });
            }
            None if overflow.is_none() => overflow = Some(doc),
            None => left_out.push(doc.id.clone()),
        }
    }

    // The partial document's text allowance; shrinks when the exact check finds an overshoot.
    let partial_doc = overflow;
    let mut allowance: Option<usize> = None;
    if let Some(doc) = partial_doc {
        let room = budget.saturating_sub(used);
        let frame = counter.count(&piece_text(format, pieces.is_empty(), &doc.id, &format.truncation_marker))?;
        let fits_any = !matches!(partial, Partial::Skip) && room > 0 && room >= min_partial_tokens;
        allowance = (fits_any && room > frame).then(|| room - frame);
    }
    let mut partial_piece: Option<Piece> = None;

    loop {
        if let (Some(doc), Some(max)) = (partial_doc, allowance) {
            partial_piece = shrink(doc, max, partial, format, pieces.is_empty(), counter)?;
            if partial_piece.is_none() {
                allowance = None;
            }
        }
        let mut rendered: String = pieces.iter().map(|p| p.text.as_str()).collect();
        if let Some(p) = &partial_piece {
            rendered.push_str(&p.text);
        }
        let tokens = counter.count(&rendered)?;
        if tokens <= budget {
            if let Some(doc) = partial_doc
                && partial_piece.is_none()
            {
                left_out.insert(0, doc.id.clone());
            }
            let mut included: Vec<PackedDocument> = pieces.into_iter().map(|p| p.doc).collect();
            included.extend(partial_piece.map(|p| p.doc));
            return Ok(Packed { rendered, tokens, budget, included, duplicates, left_out });
        }
        // BPE is not additive: the rendered whole counts more than its pieces did. Shrink.
        let over = tokens - budget;
        match allowance {
            Some(max) if partial_piece.is_some() && max > over => allowance = Some(max - over),
            Some(_) if partial_piece.is_some() => {
                allowance = None;
                partial_piece = None;
            }
            _ => {
                if let Some(last) = pieces.pop() {
                    left_out.insert(0, last.doc.id);
                }
            }
        }
    }
}

/// The text of a piece: the separator unless it is the first, then the document's block.
fn piece_text(format: &DocumentFormat, first: bool, id: &str, text: &str) -> String {
    let block = format.render(id, text);
    if first { block } else { format!("{}{}", format.separator, block) }
}

/// The partial piece of `doc` whose text has at most `max` tokens, or `None` when nothing useful
/// fits (an empty prefix, or a policy that packs nothing).
fn shrink(
    doc: &RankedDocument,
    max: usize,
    partial: Partial<'_>,
    format: &DocumentFormat,
    first: bool,
    counter: &TokenCounter,
) -> Result<Option<Piece>, TurnError> {
    let (text, inclusion) = match partial {
        Partial::Skip => return Ok(None),
        Partial::Truncate => {
            let prefix = counter.truncate_to(&doc.text, max)?;
            if prefix.is_empty() {
                return Ok(None);
            }
            (format!("{prefix}{}", format.truncation_marker), Inclusion::Truncated)
        }
        Partial::Compact(compactor) => {
            let request = CompactRequest::new(&doc.id, &doc.text, counter).with_max_tokens(max);
            let compacted = compactor
                .compact(&request)
                .map_err(|source| TurnError::Compactor { document_id: doc.id.clone(), source: Box::new(source) })?;
            if counter.fits(&compacted, max)? {
                (compacted.into_owned(), Inclusion::Compacted { truncated: false })
            } else {
                let prefix = counter.truncate_to(&compacted, max)?;
                (format!("{prefix}{}", format.truncation_marker), Inclusion::Compacted { truncated: true })
            }
        }
    };
    if text.is_empty() {
        return Ok(None);
    }
    let doc = PackedDocument { id: doc.id.clone(), text: text.clone(), inclusion };
    Ok(Some(Piece { text: piece_text(format, first, &doc.id, &text), doc }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    fn counter() -> TokenCounter {
        TokenCounter::for_encoding(Encoding::Cl100kBase)
    }

    fn docs() -> Vec<RankedDocument> {
        vec![
            RankedDocument::new("a", "alpha ".repeat(50)),
            RankedDocument::new("b", "beta ".repeat(400)),
            RankedDocument::new("c", "gamma ".repeat(20)),
            RankedDocument::new("a", "alpha again"),
        ]
    }

    #[test]
    fn whole_documents_first_then_skip() {
        let c = counter();
        let p = pack_documents(&docs(), &|_| false, 200, &DocumentFormat::default(), Partial::Skip, 0, &c).unwrap();
        let ids: Vec<&str> = p.included.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["a", "c"]);
        assert_eq!(p.left_out, ["b"]);
        assert_eq!(p.duplicates, ["a"]);
        assert_eq!(p.tokens, c.count(&p.rendered).unwrap());
        assert!(p.tokens <= 200);
    }

    #[test]
    fn truncate_fills_the_rest_and_marks_the_cut() {
        let c = counter();
        let f = DocumentFormat::default();
        let p = pack_documents(&docs(), &|id| id == "c", 300, &f, Partial::Truncate, 0, &c).unwrap();
        assert_eq!(p.included.len(), 2);
        assert_eq!(p.included[1].inclusion, Inclusion::Truncated);
        assert!(p.included[1].text.ends_with(&f.truncation_marker));
        assert_eq!(p.duplicates, ["c", "a"]);
        assert!(p.tokens <= 300 && p.tokens == c.count(&p.rendered).unwrap());
        // Nearly full: the rendered whole is within a few tokens of the budget.
        assert!(p.tokens + 8 >= 300, "{}", p.tokens);
    }

    #[test]
    fn a_zero_budget_packs_nothing() {
        let c = counter();
        let p = pack_documents(&docs(), &|_| false, 0, &DocumentFormat::default(), Partial::Truncate, 0, &c).unwrap();
        assert_eq!((p.rendered.as_str(), p.tokens), ("", 0));
        assert_eq!(p.left_out, ["a", "b", "c"]);
    }
}
