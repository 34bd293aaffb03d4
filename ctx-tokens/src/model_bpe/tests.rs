//! The open models' scanners against the `tokenizers` pre-tokenizers they stand for, and the
//! merge against `tokenizers`' BPE on small vocabularies built to disagree with a rank file.
//! The real vocabularies (Llama 3, Qwen 2, GPT-2, StarCoder, SmolLM2) are checked against
//! `tokenizers` and llama.cpp in `ctx-runtime/tests/model_files.rs`.

use proptest::prelude::*;
use serde_json::json;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer};

use super::*;
use crate::pretokenize::Pieces;

fn byte_level(use_regex: bool) -> Value {
    json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": use_regex})
}

fn split(regex: &str) -> Value {
    json!({"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": false},
        byte_level(false),
    ]})
}

/// Each scanner with the `tokenizer.json` pre-tokenizer it stands for.
fn pre_tokenizers() -> Vec<(Pattern, Value)> {
    vec![
        (Pattern::Cl100k, split(LLAMA3_REGEX)),
        (Pattern::Qwen2, split(QWEN2_REGEX)),
        (Pattern::Gpt2, byte_level(true)),
        (
            Pattern::Gpt2Digits,
            json!({"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true}, byte_level(true)]}),
        ),
    ]
}

fn compiled() -> &'static [(Pattern, PreTokenizerWrapper)] {
    static ALL: std::sync::OnceLock<Vec<(Pattern, PreTokenizerWrapper)>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        pre_tokenizers().into_iter().map(|(p, v)| (p, serde_json::from_value(v).expect("pre-tokenizer"))).collect()
    })
}

#[track_caller]
fn assert_same_split(pattern: Pattern, pre: &PreTokenizerWrapper, text: &str) {
    let ours: Vec<&str> = Pieces::new(pattern, text).collect();
    let mut pre_tokenized = PreTokenizedString::from(text);
    pre.pre_tokenize(&mut pre_tokenized).expect("pre-tokenize");
    let theirs: Vec<&str> = pre_tokenized
        .get_splits(OffsetReferential::Original, OffsetType::Byte)
        .into_iter()
        .map(|(_, (start, end), _)| &text[start..end])
        .collect();
    assert_eq!(ours, theirs, "{pattern:?} split of {text:?}");
}

fn assert_all_same(text: &str) {
    for (pattern, pre) in compiled() {
        assert_same_split(*pattern, pre, text);
    }
}

#[test]
fn every_pre_tokenizer_is_recognised_as_its_scanner() {
    for (pattern, pre) in pre_tokenizers() {
        assert_eq!(pattern_of(&pre), Some(pattern), "{pre}");
    }
    // A prefix space, another regex, or a split that drops text: not ours.
    let prefixed = json!({"type": "ByteLevel", "add_prefix_space": true, "use_regex": true});
    let absent = json!({"type": "ByteLevel"});
    let other = split(r"\s+|\S+");
    let mut removed = split(LLAMA3_REGEX);
    removed["pretokenizers"][0]["behavior"] = json!("Removed");
    for pre in [prefixed, absent, other, removed, json!({"type": "Whitespace"})] {
        assert_eq!(pattern_of(&pre), None, "{pre}");
    }
}

/// The characters the four patterns tell apart: contraction letters in both cases, the
/// apostrophe, the space and other whitespace, line breaks, digits of several scripts, letters,
/// marks, punctuation and symbols.
const REPRESENTATIVES: &[char] = &[
    'a', 'Z', 's', 'S', 't', 'r', 'e', 'v', 'm', 'l', 'L', 'd', 'ſ', 'é', '東', '\u{301}', '\'', '0', '٣', 'Ⅻ', '½',
    ' ', '\t', '\n', '\r', '\u{3000}', '\u{85}', '\u{a0}', '/', '!', '.', '€', '🦀', '𝔸',
];

#[test]
fn every_pair_and_triple_of_representative_characters() {
    let mut text = String::new();
    for &a in REPRESENTATIVES {
        for &b in REPRESENTATIVES {
            for &c in REPRESENTATIVES.iter().chain([&'\0']) {
                text.clear();
                text.extend([a, b]);
                if c != '\0' {
                    text.push(c);
                }
                assert_all_same(&text);
            }
        }
    }
}

#[test]
fn the_corpus_is_cut_the_same_way() {
    for (_, text) in &crate::test_corpus::corpus_files() {
        assert_all_same(text);
    }
}

#[test]
fn digits_the_two_unicode_tables_disagree_on() {
    // `Digits` tests `char::is_numeric` (the standard library's tables), GPT-2's regex `\p{N}`
    // (the regex crate's): around a character they disagree on, both splits must still agree.
    let classes = crate::char_classes::CharClasses::get();
    let mut disagree = 0;
    for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
        let regex_number = classes.of(u32::from(c)) & crate::char_classes::NUMBER != 0;
        if regex_number != c.is_numeric() {
            disagree += 1;
            assert_all_same(&format!("a{c}1 {c}{c}x {c} 2{c}"));
        }
    }
    assert!(disagree < 100, "{disagree}");
}

fn alphabet_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(REPRESENTATIVES), 0..80).prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    #[test]
    fn random_texts_of_representative_characters(text in alphabet_text()) {
        assert_all_same(&text);
    }

    #[test]
    fn random_unicode_texts(text in "\\PC{0,60}") {
        assert_all_same(&text);
    }
}

/// A byte-level BPE over `merges` (byte-level strings), with two added tokens, as a
/// `tokenizer.json`.
fn tiny_model(merges: &[(&str, &str)], ignore_merges: bool, pre: Value) -> Value {
    let mut vocab = serde_json::Map::new();
    for c in byte_chars() {
        let id = vocab.len();
        vocab.insert(c.to_string(), json!(id));
    }
    for (a, b) in merges {
        let id = vocab.len();
        vocab.entry(format!("{a}{b}")).or_insert(json!(id));
    }
    // A token no merge reaches: a rank file would merge "ca" + "b" into it, this list never.
    let id = vocab.len();
    vocab.insert("cab".to_owned(), json!(id));
    let added = |id: usize, content: &str, normalized: bool| {
        json!({"id": id, "content": content, "single_word": false, "lstrip": false, "rstrip": false,
               "normalized": normalized, "special": !normalized})
    };
    let n = vocab.len();
    json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [added(n, "<|s|>", false), added(n + 1, "<|s", true), added(n + 2, "ab", true)],
        "normalizer": null, "pre_tokenizer": pre, "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                  "ignore_merges": ignore_merges, "vocab": vocab,
                  "merges": merges.iter().map(|(a, b)| format!("{a} {b}")).collect::<Vec<_>>()},
    })
}

/// Merges chosen so that order matters: overlapping pairs, a merge listed twice, long runs.
const MERGES: &[(&str, &str)] = &[
    ("b", "c"),
    ("a", "b"),
    ("ab", "c"),
    ("a", "a"),
    ("aa", "aa"),
    ("Ġ", "Ġ"),
    ("ĠĠ", "ĠĠ"),
    ("c", "a"),
    ("b", "ca"),
    ("a", "b"),
    ("Ġ", "a"),
    ("Ġa", "b"),
    ("1", "2"),
];

fn tiny_models() -> &'static [(ModelBpe, tokenizers::Tokenizer)] {
    static ALL: std::sync::OnceLock<Vec<(ModelBpe, tokenizers::Tokenizer)>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = Vec::new();
        for (_, pre) in pre_tokenizers() {
            for ignore in [false, true] {
                let spec = tiny_model(MERGES, ignore, pre.clone());
                let ours = ModelBpe::from_spec(&spec).expect("recognised");
                let theirs = tokenizers::Tokenizer::from_bytes(spec.to_string().as_bytes()).expect("tokenizer");
                all.push((ours, theirs));
            }
        }
        all
    })
}

#[track_caller]
fn assert_same_count(text: &str) {
    for (ours, theirs) in tiny_models() {
        let want = theirs.encode_fast(text, false).expect("encode").len();
        assert_eq!(ours.count(text), want, "{ours:?}: {text:?}");
    }
}

#[test]
fn the_merge_follows_the_list_not_the_vocabulary() {
    for text in [
        "abc",
        "bca",
        "abca",
        "aaaaaaa",
        "cabcabca ab<|s|>abc<|s<|s|",
        "   ab  ab",
        "1234 12 123",
        &"a".repeat(200),
        &"abc".repeat(100),
        &" ".repeat(300),
        &format!("{} ab", " ".repeat(90)),
    ] {
        assert_same_count(text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn the_merge_agrees_with_tokenizers(text in "([abc12 ]|<\\|s\\|?>?|\\PC){0,120}") {
        assert_same_count(&text);
    }
}

#[test]
fn what_ctx_cannot_reproduce_is_refused_with_a_reason() {
    let base = tiny_model(MERGES, false, byte_level(true));
    let mut cases = Vec::new();
    let mut with = |pointer: &str, value: Value| {
        let mut spec = base.clone();
        *spec.pointer_mut(pointer).expect(pointer) = value;
        cases.push(spec);
    };
    with("/normalizer", json!({"type": "NFC"}));
    with("/pre_tokenizer", json!({"type": "Whitespace"}));
    with("/model/dropout", json!(0.1));
    with("/model/continuing_subword_prefix", json!("##"));
    with("/added_tokens/0/lstrip", json!(true));
    with("/model/type", json!("WordPiece"));
    for spec in cases {
        assert!(ModelBpe::from_spec(&spec).is_err(), "{spec}");
    }
    assert!(ModelBpe::from_spec(&base).is_ok());
}

/// The tiny models without tokens for a control character, `x`, `0xF1` and `0xF5`..`0xFF`, as
/// StarCoder's and SmolLM2's vocabularies lack some bytes.
fn models_missing_bytes() -> &'static [(ModelBpe, tokenizers::Tokenizer)] {
    static ALL: std::sync::OnceLock<Vec<(ModelBpe, tokenizers::Tokenizer)>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let chars = byte_chars();
        let missing: Vec<u8> = [0x04, b'x', 0xF1].into_iter().chain(0xF5..=0xFF).collect();
        let mut all = Vec::new();
        for (_, pre) in pre_tokenizers() {
            for ignore in [false, true] {
                let mut spec = tiny_model(MERGES, ignore, pre.clone());
                let vocab = spec.pointer_mut("/model/vocab").and_then(Value::as_object_mut).expect("vocab");
                for &b in &missing {
                    vocab.remove(&chars[usize::from(b)].to_string());
                }
                let ours = ModelBpe::from_spec(&spec).expect("recognised");
                assert!(ours.missing_bytes);
                let theirs = tokenizers::Tokenizer::from_bytes(spec.to_string().as_bytes()).expect("tokenizer");
                all.push((ours, theirs));
            }
        }
        all
    })
}

#[test]
fn bytes_without_a_token_are_left_out_as_tokenizers_leaves_them() {
    // `a`, the missing `x`, then `b`: the neighbours merge once `x` is left out.
    for text in ["axb", "x", "xx", "a\u{4}b", "\u{40000}", "ab\u{40001}c x12 \u{4}\u{4}ab", "Ġx"] {
        for (ours, theirs) in models_missing_bytes() {
            let want = theirs.encode_fast(text, false).expect("encode").len();
            assert_eq!(ours.count(text), want, "{ours:?}: {text:?}");
        }
    }
    // Not when the model has an unknown token to stand in for them.
    let mut spec = tiny_model(MERGES, false, byte_level(true));
    spec.pointer_mut("/model/vocab").and_then(Value::as_object_mut).expect("vocab").remove("x");
    spec["model"]["unk_token"] = json!("<|s|>");
    assert!(ModelBpe::from_spec(&spec).is_err());
}

proptest! {
    #[test]
    fn missing_bytes_agree_with_tokenizers(text in "([abcx12 \\u{4}\\u{40000}]|\\PC){0,80}") {
        for (ours, theirs) in models_missing_bytes() {
            let want = theirs.encode_fast(text.as_str(), false).expect("encode").len();
            prop_assert_eq!(ours.count(&text), want, "{:?}: {:?}", ours, text);
        }
    }
}

#[test]
fn long_pieces_merge_as_tokenizers_does() {
    // Past the array merge (64 bytes): runs, repeated pairs, and mixed letters in one piece.
    for n in [65, 66, 100, 129, 300] {
        for text in [
            "a".repeat(n),
            " ".repeat(n),
            format!("{}ab", " ".repeat(n)),
            "abc".repeat(n / 3 + 1),
            "cab".repeat(n / 3 + 1),
            format!("b{}", "ca".repeat(n / 2)),
            "aabacbbcab".repeat(n / 10 + 1),
        ] {
            assert_same_count(&text);
        }
    }
}

/// Merges for the run-by-run merge: some that allow a run's pairs to be merged at once, and some
/// that forbid it — a merge of the new part with its neighbour listed before the run's own
/// (`aa a` before `a a`, `b ĠĠ` before `Ġ Ġ`), so the part-by-part order must be followed.
const RUN_MERGES: &[(&str, &str)] = &[
    ("aa", "a"),
    ("b", "ĠĠ"),
    ("a", "a"),
    ("Ġ", "Ġ"),
    ("ĠĠ", "ĠĠ"),
    ("ĠĠĠĠ", "Ġ"),
    ("aaa", "aaa"),
    ("Ċ", "Ġ"),
    ("Ċ", "Ċ"),
    ("ĊĠ", "Ġ"),
    ("ĠĠĠĠ", "ĠĠĠĠ"),
    ("ĠĠ", "Ġ"),
    ("a", "aa"),
    ("=", "="),
    ("==", "=="),
    ("====", "="),
    ("ĉ", "Ġ"),
    ("ĉĠ", "ĠĠ"),
    ("Ġ", "a"),
    ("aa", "aa"),
];

fn run_models() -> &'static [(ModelBpe, tokenizers::Tokenizer)] {
    static ALL: std::sync::OnceLock<Vec<(ModelBpe, tokenizers::Tokenizer)>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        [false, true]
            .into_iter()
            .map(|ignore| {
                let spec = tiny_model(RUN_MERGES, ignore, byte_level(true));
                let ours = ModelBpe::from_spec(&spec).expect("recognised");
                let theirs = tokenizers::Tokenizer::from_bytes(spec.to_string().as_bytes()).expect("tokenizer");
                (ours, theirs)
            })
            .collect()
    })
}

/// Up to 10 runs of one byte each, 1 to 150 bytes long.
fn runs_of_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((prop::sample::select(&b" \t\na=b"[..]), 1..150usize), 1..10)
        .prop_map(|runs| runs.into_iter().flat_map(|(b, n)| std::iter::repeat_n(b, n)).collect())
}

#[test]
fn runs_merge_at_once_only_when_nothing_comes_between() {
    let (ours, _) = &run_models()[0];
    // `a a` then `aa a` first: `aaa a aaa a ...`, never all `aa`s at once.
    for n in [32, 33, 40, 64, 65, 100, 301] {
        let piece = vec![b'a'; n];
        assert_eq!(ours.merge_runs_if_few(&piece), Some(ours.merge_parts(&piece)), "{n} a");
        let piece: Vec<u8> = b"b".iter().chain(&vec![b' '; n]).copied().collect();
        assert_eq!(ours.merge_runs_if_few(&piece), Some(ours.merge_parts(&piece)), "b and {n} spaces");
    }
    // Too many runs, or too short: the part-by-part merge.
    assert_eq!(ours.merge_runs_if_few(&b" a".repeat(20)), None);
    assert_eq!(ours.merge_runs_if_few(&[b' '; 31]), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    /// The run-by-run merge against the part-by-part one, on any bytes made of runs.
    #[test]
    fn the_run_merge_is_the_part_merge(piece in runs_of_bytes()) {
        for (ours, _) in run_models() {
            if let Some(n) = ours.merge_runs_if_few(&piece) {
                prop_assert_eq!(n, ours.merge_parts(&piece), "{:?}", String::from_utf8_lossy(&piece));
            }
        }
    }

    /// And the whole count against `tokenizers`, on texts of runs.
    #[test]
    fn texts_of_runs_count_as_tokenizers_counts(piece in runs_of_bytes()) {
        let text = String::from_utf8(piece).expect("ASCII");
        for (ours, theirs) in run_models() {
            let want = theirs.encode_fast(text.as_str(), false).expect("encode").len();
            prop_assert_eq!(ours.count(&text), want, "{:?}", text);
        }
    }
}

/// Llama 3's, Qwen 2's and StarCoder's vocabularies from llama.cpp's fixtures
/// (`scripts/model-fixtures.sh`), as ctx reads them and as `tokenizers` builds them; none
/// without `CTX_VOCAB_DIR` (which CI sets; a test that needs them fails there without them).
fn real_models() -> &'static [(&'static str, ModelBpe, tokenizers::Tokenizer)] {
    type Models = Vec<(&'static str, ModelBpe, tokenizers::Tokenizer)>;
    static ALL: std::sync::OnceLock<Models> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let Some(dir) = std::env::var_os("CTX_VOCAB_DIR").filter(|d| !d.is_empty()) else {
            assert!(std::env::var_os("CI").is_none(), "CTX_VOCAB_DIR is not set under CI");
            eprintln!("skipped the real vocabularies: CTX_VOCAB_DIR is not set (scripts/model-fixtures.sh env)");
            return Vec::new();
        };
        ["ggml-vocab-llama-bpe.gguf", "ggml-vocab-qwen2.gguf", "ggml-vocab-starcoder.gguf"]
            .into_iter()
            .map(|name| {
                let meta = crate::GgufMetadata::read(std::path::Path::new(&dir).join(name)).expect(name);
                let spec = crate::hf::gguf_tokenizer_json(&meta).expect(name);
                let ours = ModelBpe::from_spec(&spec).expect(name);
                let theirs = tokenizers::Tokenizer::from_bytes(spec.to_string().as_bytes()).expect(name);
                (name, ours, theirs)
            })
            .collect()
    })
}

/// Runs of the bytes that make long pieces in code and logs (indentation, blank lines, rules,
/// a word after spaces), 1 to 300 bytes each.
fn runs_of_real_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((prop::sample::select(&b" \t\n\r=-_*#a/"[..]), 1..300usize), 1..10)
        .prop_map(|runs| runs.into_iter().flat_map(|(b, n)| std::iter::repeat_n(b, n)).collect())
}

#[test]
fn real_vocabularies_merge_long_runs_as_tokenizers_does() {
    for (name, ours, theirs) in real_models() {
        for n in [32, 63, 64, 65, 127, 128, 129, 255, 256, 280, 1000, 5000] {
            for unit in [" ", "\t", "\n", "=", "-", "\n ", " \t"] {
                for text in [unit.repeat(n), format!("\n{}", unit.repeat(n)), format!("{}x", unit.repeat(n))] {
                    let want = theirs.encode_fast(text.as_str(), false).expect("encode").len();
                    assert_eq!(ours.count(&text), want, "{name}: {text:?}");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// On the real vocabularies, the run-by-run merge against the part-by-part one (on pieces
    /// made of runs, whatever the pre-tokenizer would cut), and the whole count against
    /// `tokenizers`.
    #[test]
    fn real_vocabularies_merge_runs_as_parts(piece in runs_of_real_bytes()) {
        let text = String::from_utf8(piece).expect("ASCII");
        for (name, ours, theirs) in real_models() {
            if let Some(n) = ours.merge_runs_if_few(text.as_bytes()) {
                prop_assert_eq!(n, ours.merge_parts(text.as_bytes()), "{}: {:?}", name, text);
            }
            let want = theirs.encode_fast(text.as_str(), false).expect("encode").len();
            prop_assert_eq!(ours.count(&text), want, "{}: {:?}", name, text);
        }
    }
}
