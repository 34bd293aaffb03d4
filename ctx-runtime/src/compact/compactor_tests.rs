//! Tests of the built-in compactors and the adapters.

use super::*;
use crate::tokens::Encoding;

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

#[test]
fn truncate_is_token_exact_and_lossless_without_a_budget() {
    let c = counter();
    let text = "alpha beta gamma delta epsilon zeta eta theta";
    for max in 0..=c.count(text).unwrap() + 1 {
        let out = TruncateCompactor.compact(&CompactRequest::new("t", text, &c).with_max_tokens(max)).unwrap();
        assert!(text.starts_with(out.as_ref()));
        assert_eq!(c.count(&out).unwrap(), max.min(c.count(text).unwrap()), "max {max}");
    }
    let out = TruncateCompactor.compact(&CompactRequest::new("t", text, &c)).unwrap();
    assert!(matches!(out, Cow::Borrowed(t) if t == text), "no budget, no cut");
}

#[test]
fn truncate_after_enforces_a_reducing_compactor() {
    let c = counter();
    let strip = FnCompactor::new(|r: &CompactRequest<'_>| Ok(r.text.replace("-- comment\n", "")));
    let text = "-- comment\nSELECT a, b, c FROM t WHERE a = 1 AND b = 2";
    let request = CompactRequest::new("sql", text, &c).with_max_tokens(4);
    let reduced = strip.compact(&request).unwrap();
    assert!(c.count(&reduced).unwrap() > 4, "the plain function only reduces");
    let enforced = TruncateAfter(Arc::new(strip)).compact(&request).unwrap();
    assert_eq!(c.count(&enforced).unwrap(), 4);
    assert!(enforced.starts_with("SELECT"), "{enforced}");
}

#[test]
fn an_unchanged_answer_is_borrowed() {
    let c = counter();
    let same = FnCompactor::new(|r: &CompactRequest<'_>| Ok(r.text.to_owned()));
    assert!(matches!(same.compact(&CompactRequest::new("n", "x y", &c)).unwrap(), Cow::Borrowed(_)));
}

#[test]
fn code_compactors_strip_before_they_cut() {
    let c = counter();
    let sql = "-- monthly totals\nSELECT   customer_id,\n         SUM(total)   AS total   -- gross\n\
               FROM     invoices\n\n\nGROUP BY customer_id;";
    let stripped = crate::compact::sql::compact(sql, &c).unwrap();
    assert!(stripped.changed && !stripped.text.contains("--"));
    for compactor in [CodeCompactor::SQL, CodeCompactor::DETECT] {
        let lossless = CompactRequest::new("q", sql, &c);
        assert_eq!(compactor.compact(&lossless).unwrap(), stripped.text);
        assert_eq!(compactor.compact(&lossless.with_max_tokens(1_000)).unwrap(), stripped.text);
        let out = compactor.compact(&lossless.with_max_tokens(6)).unwrap();
        assert_eq!(c.count(&out).unwrap(), 6);
        assert!(stripped.text.starts_with(out.as_ref()), "{out:?}");
    }
    let csharp = "// totals\npublic int Total() {\n    return 1; // one\n}";
    let out = CodeCompactor::DOTNET.compact(&CompactRequest::new("cs", csharp, &c).with_max_tokens(1_000)).unwrap();
    assert!(!out.contains("// one") && out.contains("return 1;"), "{out:?}");
    // DETECT follows the caller's classification when it has one.
    let sql_language = NodeLanguage::Code(Language::Sql);
    let named = CompactRequest::new("q", "SELECT 1 -- c", &c).with_language(&sql_language);
    assert_eq!(CodeCompactor::DETECT.compact(&named).unwrap(), "SELECT 1");
}

#[test]
fn prose_compactors_fold_then_cut() {
    let c = counter();
    let json = "{ \"a\" : [ 1, 2 ],\n  \"b\" : \"x  y\" }";
    let out = ProseCompactor::Json.compact(&CompactRequest::new("j", json, &c)).unwrap();
    assert_eq!(out, "{\"a\":[1,2],\"b\":\"x  y\"}");
    let md = "# Title   \n\n\n\nBody";
    assert_eq!(ProseCompactor::Markdown.compact(&CompactRequest::new("m", md, &c)).unwrap(), "# Title\n\nBody");
    let cut =
        ProseCompactor::Text.compact(&CompactRequest::new("t", "one   two three", &c).with_max_tokens(2)).unwrap();
    assert_eq!(cut, "one two");
}
