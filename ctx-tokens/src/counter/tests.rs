use super::*;

fn cl100k() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

#[test]
fn counts_match_known_values() {
    let c = cl100k();
    assert_eq!(c.count("hello world").unwrap(), 2);
    assert_eq!(c.count("").unwrap(), 0);
    let o = TokenCounter::for_encoding(Encoding::O200kBase);
    assert_eq!(o.count("hello world").unwrap(), 2);
}

#[test]
fn special_token_text_is_ordinary_text() {
    let c = cl100k();
    // As a special token `<|endoftext|>` would be one token; as text it is several.
    let n = c.count("<|endoftext|>").unwrap();
    assert!(n > 1, "counted as a special token: {n}");
    assert_eq!(c.encode("<|endoftext|>").unwrap().len(), n);
    assert_eq!(c.decode(&c.encode("a <|endoftext|> b").unwrap()).unwrap(), "a <|endoftext|> b");
}

#[test]
fn early_exit_and_fits() {
    let c = cl100k();
    let text = "word ".repeat(1000);
    let n = c.count(&text).unwrap();
    assert_eq!(c.count_up_to(&text, n).unwrap(), Some(n));
    assert_eq!(c.count_up_to(&text, n - 1).unwrap(), None);
    assert!(c.fits("abc", 3).unwrap());
    assert!(!c.fits(&text, 10).unwrap());
}

#[test]
fn truncate_never_exceeds_the_limit() {
    let c = cl100k();
    let text = "Příliš žluťoučký kůň úpěl ďábelské ódy. ".repeat(20);
    for max in [0, 1, 5, 17, 100] {
        let t = c.truncate_to(&text, max).unwrap();
        assert!(c.count(&t).unwrap() <= max);
        assert!(text.starts_with(&t));
    }
}

#[test]
fn decode_of_bad_ids_is_an_error_not_a_panic() {
    assert!(cl100k().decode(&[u32::MAX]).is_err());
}
