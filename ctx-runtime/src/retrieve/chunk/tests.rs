use proptest::prelude::*;

use super::*;
use crate::tokens::{Encoding, TokenCounter};

fn chunker(max: usize, overlap: usize) -> Chunker {
    Chunker::new(TokenCounter::for_encoding(Encoding::Cl100kBase), ChunkOptions::new(max).with_overlap(overlap))
        .expect("valid options")
}

/// The invariants every chunking keeps, whatever the kind.
fn check(chunker: &Chunker, kind: ChunkKind, doc: &str, chunks: &[Chunk]) {
    if doc.is_empty() {
        assert!(chunks.is_empty());
        return;
    }
    assert_eq!(chunks.first().map(|c| c.start), Some(0));
    assert_eq!(chunks.last().map(|c| c.end), Some(doc.len()));
    for (i, c) in chunks.iter().enumerate() {
        assert_eq!(c.text, doc[c.start..c.end], "chunk {i} is a slice of the document");
        assert!(c.start < c.end);
        assert_eq!(c.tokens, chunker.counter().count(&c.text).unwrap());
        assert!(c.tokens <= chunker.options().max_tokens, "chunk {i}: {} tokens", c.tokens);
        if let Some(prev) = i.checked_sub(1).map(|p| &chunks[p]) {
            assert!(c.start > prev.start, "in order");
            if kind == ChunkKind::Text {
                assert!(c.start <= prev.end, "windows leave no gap");
            } else {
                assert_eq!(c.start, prev.end, "sections meet exactly");
            }
        }
    }
    let ids: std::collections::BTreeSet<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), chunks.len(), "ids are unique");
    if kind != ChunkKind::Text {
        assert_eq!(chunks.iter().map(|c| c.text.as_str()).collect::<String>(), doc);
    }
}

#[test]
fn kinds_by_extension_and_overrides() {
    let options = ChunkOptions::new(100).with_kind(".SQL", ChunkKind::Text);
    assert_eq!(options.kind_for("docs/Guide.MD"), ChunkKind::Markdown);
    assert_eq!(options.kind_for("src/lib.rs"), ChunkKind::Code);
    assert_eq!(options.kind_for("db/x.sql"), ChunkKind::Text);
    assert_eq!(options.kind_for("notes.txt"), ChunkKind::Text);
    assert_eq!(options.kind_for(".gitignore"), ChunkKind::Text);
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    assert_eq!(
        Chunker::new(counter.clone(), ChunkOptions::new(4)).unwrap_err(),
        ChunkError::SizeTooSmall { max_tokens: 4 }
    );
    assert!(matches!(
        Chunker::new(counter, ChunkOptions::new(10).with_overlap(10)),
        Err(ChunkError::OverlapTooLarge { .. })
    ));
}

#[test]
fn markdown_sections_keep_heading_paths_and_ignore_fenced_hashes() {
    let doc =
        "Intro line.\n\n# Guide\nText.\n```sh\n# not a heading\n```\n## Install\nStep.\n## Install\nAgain.\n# Other\n";
    let c = chunker(500, 0);
    let chunks = c.chunk("g.md", doc).unwrap();
    check(&c, ChunkKind::Markdown, doc, &chunks);
    let got: Vec<(&str, Option<&str>, usize, usize)> =
        chunks.iter().map(|c| (c.id.as_str(), c.title.as_deref(), c.start_line, c.end_line)).collect();
    assert_eq!(
        got,
        [
            ("g.md#preamble", None, 1, 2),
            ("g.md#guide", Some("Guide"), 3, 7),
            ("g.md#install", Some("Guide > Install"), 8, 9),
            ("g.md#install-2", Some("Guide > Install"), 10, 11),
            ("g.md#other", Some("Other"), 12, 12),
        ]
    );
}

#[test]
fn large_sections_are_cut_at_paragraphs_first() {
    let para = |i: usize| format!("Paragraph {i} talks about invoices, totals and the order service in detail.\n\n");
    let doc = format!("# Big\n{}", (0..12).map(para).collect::<String>());
    let c = chunker(60, 0);
    let chunks = c.chunk("big.md", &doc).unwrap();
    check(&c, ChunkKind::Markdown, &doc, &chunks);
    assert!(chunks.len() > 1);
    assert_eq!(chunks[1].id, "big.md#big/part-2");
    // Every cut is at a paragraph start, since each paragraph fits on its own.
    for chunk in &chunks[1..] {
        assert!(chunk.text.starts_with("Paragraph"), "{:?}", chunk.text);
    }
}

#[test]
fn code_is_cut_before_items_with_their_comments() {
    let doc = "use std::fmt;\n\n/// Money.\n#[derive(Debug)]\npub struct Money(i64);\n\nimpl Money {\n    fn cents(&self) -> i64 { self.0 }\n}\n\nfn main() {}\n";
    let c = chunker(24, 0);
    let chunks = c.chunk("src/money.rs", doc).unwrap();
    check(&c, ChunkKind::Code, doc, &chunks);
    assert!(chunks.len() > 1, "{chunks:#?}");
    // The doc comment and the attribute stay with their struct; the impl is not cut inside.
    assert!(chunks.iter().any(|ch| ch.text.contains("/// Money.\n#[derive(Debug)]\npub struct Money")), "{chunks:#?}");
    assert!(chunks.iter().all(|ch| !ch.text.starts_with("#[derive") && !ch.text.starts_with("pub struct")));
    assert!(chunks.iter().any(|ch| ch.text.starts_with("impl Money {\n") && ch.text.contains("}\n")), "{chunks:#?}");
    assert_eq!(chunks[0].id, "src/money.rs#chunk-1");
    // A size that holds everything merges it into one chunk.
    let one = chunker(500, 0).chunk("src/money.rs", doc).unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].title.as_deref(), Some("use std::fmt;"));
}

#[test]
fn sql_procedures_are_separate_chunks() {
    let body =
        "    SELECT o.id, SUM(l.price) AS total FROM Orders o JOIN Lines l ON l.order_id = o.id GROUP BY o.id;\n";
    let doc = format!("CREATE PROCEDURE dbo.usp_A AS\n{body}GO\n-- B\nCREATE PROCEDURE dbo.usp_B AS\n{body}GO\n");
    let c = chunker(40, 0);
    let chunks = c.chunk("procs.sql", &doc).unwrap();
    check(&c, ChunkKind::Code, &doc, &chunks);
    assert!(chunks.iter().any(|ch| ch.text.starts_with("-- B\nCREATE PROCEDURE dbo.usp_B")), "{chunks:#?}");
}

#[test]
fn text_windows_overlap_by_tokens() {
    let doc = "The quick brown fox jumps over the lazy dog. ".repeat(30);
    let c = chunker(50, 10);
    let chunks = c.chunk("notes.txt", &doc).unwrap();
    check(&c, ChunkKind::Text, &doc, &chunks);
    assert!(chunks.len() > 2);
    for pair in chunks.windows(2) {
        let overlap = &doc[pair[1].start..pair[0].end];
        let n = c.counter().count(overlap).unwrap();
        assert!((1..=10).contains(&n), "overlap of {n} tokens: {overlap:?}");
    }
}

fn doc_strategy() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("# Title\n".to_owned()),
        Just("## Sub section\n".to_owned()),
        Just("```\n".to_owned()),
        Just("~~~\n".to_owned()),
        Just("\n".to_owned()),
        Just("fn main() {\n".to_owned()),
        Just("CREATE PROCEDURE dbo.p AS\n".to_owned()),
        Just("    let x = 1;\n".to_owned()),
        Just("// comment\n".to_owned()),
        "[a-zé€ ]{0,60}\n",
        "[a-z]{0,30}",
    ];
    prop::collection::vec(line, 0..40).prop_map(|lines| lines.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Chunks cover the document once, in order, within the size, for every kind.
    #[test]
    fn chunks_cover_the_document_in_order(doc in doc_strategy(), max in 8usize..80, overlap in 0usize..8) {
        let c = chunker(max, overlap.min(max - 1));
        for kind in [ChunkKind::Markdown, ChunkKind::Code, ChunkKind::Text] {
            let chunks = c.chunk_as(kind, "p", &doc).unwrap();
            check(&c, kind, &doc, &chunks);
        }
    }
}
