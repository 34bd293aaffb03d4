//! The scanners against bpe-openai's regex split: every short combination of representative
//! characters, the corpus, random texts, and the worst cases for backtracking.

use proptest::prelude::*;

use super::*;

const PATTERNS: [Pattern; 2] = [Pattern::Cl100k, Pattern::O200k];

fn tokenizer(pattern: Pattern) -> &'static bpe_openai::Tokenizer {
    match pattern {
        Pattern::Cl100k => bpe_openai::cl100k_base(),
        Pattern::O200k => bpe_openai::o200k_base(),
        other => panic!("{other:?} is checked against `tokenizers` in model_bpe/tests.rs"),
    }
}

#[track_caller]
fn assert_same_split(pattern: Pattern, text: &str) {
    let ours: Vec<&str> = Pieces::new(pattern, text).collect();
    let theirs: Vec<&str> = tokenizer(pattern).split(text).collect();
    assert_eq!(ours, theirs, "{pattern:?} split of {text:?}");
}

/// One character of every class combination the patterns tell apart, and every character a
/// pattern names: contraction letters (and long s, which case-folds to s), the apostrophe,
/// line breaks, the space, the slash.
const REPRESENTATIVES: &[char] = &[
    'a', 'Z', 's', 'S', 't', 'r', 'e', 'v', 'm', 'l', 'L', 'd', 'ſ', 'é', 'É', 'ǅ', 'ʰ', '東', '\u{301}', '\u{903}',
    '\'', '0', '٣', 'Ⅻ', '½', ' ', '\t', '\n', '\r', '\u{3000}', '\u{85}', '\u{a0}', '\u{2028}', '\u{200b}', '/', '!',
    '.', '€', '🦀', '𝔸',
];

#[test]
fn every_pair_and_triple_of_representative_characters() {
    let mut text = String::new();
    for pattern in PATTERNS {
        for &a in REPRESENTATIVES {
            for &b in REPRESENTATIVES {
                for &c in REPRESENTATIVES.iter().chain([&'\0']) {
                    text.clear();
                    text.extend([a, b]);
                    if c != '\0' {
                        text.push(c);
                    }
                    assert_same_split(pattern, &text);
                }
            }
        }
    }
}

#[test]
fn every_quadruple_of_the_characters_that_interact_most() {
    const FEW: &[char] = &['a', 'Z', 'ſ', '\'', 'l', '\u{301}', 'ʰ', ' ', '\n', '\t', '0', '!', '/'];
    let mut text = String::new();
    for pattern in PATTERNS {
        for &a in FEW {
            for &b in FEW {
                for &c in FEW {
                    for &d in FEW {
                        text.clear();
                        text.extend([a, b, c, d]);
                        assert_same_split(pattern, &text);
                    }
                }
            }
        }
    }
}

#[test]
fn the_corpus_is_cut_the_same_way() {
    let files = crate::test_corpus::corpus_files();
    assert!(files.len() >= 5, "{} corpus files", files.len());
    for (_, text) in &files {
        for pattern in PATTERNS {
            assert_same_split(pattern, text);
        }
    }
}

#[test]
fn long_runs_and_edge_texts() {
    let texts = [
        String::new(),
        "a".repeat(10_000),
        " ".repeat(10_000),
        format!("{}x", " ".repeat(5_000)),
        format!("{}\n{}", "\t ".repeat(300), " \u{3000}".repeat(300)),
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ".repeat(400),
        format!("{}ʰ{}1", "A".repeat(3_000), "B".repeat(3_000)),
        "\u{301}".repeat(500),
        "'S'T'RE'VE'M'LL'D'ſ's't're've'm'll'd".repeat(20),
        "1234567890١٢٣٤".repeat(50),
        "👨‍👩‍👧‍👦🦀\u{fe0f}⌚".repeat(40),
        "\r\n\r\n  \r  \n\n \u{85}\u{2028}x".repeat(30),
    ];
    for pattern in PATTERNS {
        for text in &texts {
            assert_same_split(pattern, text);
        }
    }
}

#[test]
fn eight_bytes_at_a_time_agree_with_the_table() {
    let classes = CharClasses::get();
    // Every byte value at every place among members, and a spread of mixed words.
    let mut words: Vec<[u8; 8]> = Vec::new();
    for b in 0..=255u8 {
        for place in 0..8 {
            for fill in [b'q', b'Q'] {
                let mut word = [fill; 8];
                word[place] = b;
                words.push(word);
            }
        }
    }
    let edges = [0, b'0', b' ', b'@', b'A', b'Z', b'[', b'`', b'a', b'z', b'{', 0x7F, 0x80, 0xC3, 0xE0, 0xFF];
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..50_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        words.push(seed.to_le_bytes().map(|b| edges[usize::from(b % 16)]));
    }
    for class in [LETTER, LOWER, UPPER] {
        let range = ascii_range(class).expect("an ASCII class");
        let member = |b: &u8| *b < 0x80 && classes.ascii[usize::from(*b)] & class != 0;
        for word in &words {
            let expected = word.iter().take_while(|b| member(b)).count();
            assert_eq!(ascii_in_range(u64::from_le_bytes(*word), range), expected, "class {class}, {word:?}");
        }
    }
}

/// Runs of each class the dispatch and its loops take (the words eight bytes at a time), of
/// every length from none to past two eight-byte steps, after a few openers and before every
/// kind of character that ends them, or the end of the text.
#[test]
fn runs_of_every_length_end_where_the_general_scanner_ends_them() {
    const OPENERS: &[&str] = &["", " ", "\t", "(", "'", "\n", "Ab", "é", " A", "(A", ". "];
    const UNITS: &[&str] = &["a", "Z", "aZ", "Za", "7", "!", "'", "/", "\n", " ", "\t", "-", ".\n", "1a"];
    const STOPS: &[&str] = &[
        "", "é", "É", "ʰ", "\u{301}", "٣", "…", "\u{3000}", "'s", "'T", "'ll", "\n", "\r\n/", "/\n", " ", " x", "!",
        "a", "A", "0", "/", "\t",
    ];
    let mut text = String::new();
    for opener in OPENERS {
        for unit in UNITS {
            for len in 0..=18 {
                for stop in STOPS {
                    text.clear();
                    text.push_str(opener);
                    for _ in 0..len {
                        text.push_str(unit);
                    }
                    text.push_str(stop);
                    assert_dispatch_agrees(&text);
                    for pattern in PATTERNS {
                        assert_same_split(pattern, &text);
                    }
                }
            }
        }
    }
}

/// The first-byte dispatch (`pretokenize/ascii.rs`) against the alternatives tried in turn, at
/// every character boundary of `text`: where the dispatch answers, the same end.
#[track_caller]
fn assert_dispatch_agrees(text: &str) {
    for pattern in [Pattern::Cl100k, Pattern::O200k, Pattern::Qwen2, Pattern::Gpt2] {
        let scanner = Scanner { bytes: text.as_bytes(), classes: CharClasses::get(), pattern };
        for (at, _) in text.char_indices() {
            if let Some(end) = scanner.ascii_piece_end(at) {
                assert_eq!(end, scanner.general_piece_end(at), "{pattern:?} at {at} of {text:?}");
            }
        }
    }
}

/// Every ASCII byte, then every ASCII byte or a few others (or the end), then a representative
/// character (or the end): every pair of first bytes the dispatch decides on, with what follows
/// them.
#[test]
fn the_first_byte_dispatch_agrees_on_every_two_ascii_bytes() {
    let seconds: Vec<char> =
        (0..128u8).map(char::from).chain(['é', 'É', 'ʰ', '東', '\u{301}', '٣', '\u{3000}', '🦀']).collect();
    let mut text = String::new();
    for a in (0..128u8).map(char::from) {
        text.clear();
        text.push(a);
        assert_dispatch_agrees(&text);
        for &b in &seconds {
            for &c in REPRESENTATIVES.iter().chain([&'\0']) {
                text.clear();
                text.extend([a, b]);
                if c != '\0' {
                    text.push(c);
                }
                assert_dispatch_agrees(&text);
            }
        }
    }
}

/// Text that is mostly ASCII (any of the 128 bytes) with runs of letters, digits, whitespace and
/// long runs of spaces, and the representative characters between them.
fn ascii_text() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        "[\\x00-\\x7F]{1,6}",
        "[a-zA-Z]{1,12}",
        "[0-9]{1,5}",
        "[ \t\r\n]{1,6}",
        // Runs of spaces long enough for the eight-at-a-time count, ending anywhere in a word.
        " {7,40}",
        prop::sample::select(REPRESENTATIVES).prop_map(String::from),
    ];
    prop::collection::vec(part, 0..24).prop_map(|parts| parts.concat())
}

/// Words of ASCII letters long enough for the eight-byte steps, between representative
/// characters.
fn wordy_text() -> impl Strategy<Value = String> {
    let part = prop_oneof!["[a-zA-Z]{1,24}", prop::sample::select(REPRESENTATIVES).prop_map(String::from)];
    prop::collection::vec(part, 0..24).prop_map(|parts| parts.concat())
}

/// Runs of ASCII punctuation, digits, line breaks and slashes of any length, between words and
/// representative characters.
fn runs_text() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        "[!-/:-@\\[-`{-~]{1,12}",
        "[0-9]{1,12}",
        "[\r\n/]{1,10}",
        " ?[a-zA-Z]{1,10}",
        "[ \t]{1,3}",
        prop::sample::select(REPRESENTATIVES).prop_map(String::from),
    ];
    prop::collection::vec(part, 0..24).prop_map(|parts| parts.concat())
}

fn alphabet_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(REPRESENTATIVES), 0..80).prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn random_texts_of_representative_characters(text in alphabet_text()) {
        for pattern in PATTERNS {
            assert_same_split(pattern, &text);
        }
    }

    #[test]
    fn random_words_between_representative_characters(text in wordy_text()) {
        for pattern in PATTERNS {
            assert_same_split(pattern, &text);
        }
        assert_dispatch_agrees(&text);
    }

    #[test]
    fn random_runs_of_punctuation_digits_and_line_breaks(text in runs_text()) {
        for pattern in PATTERNS {
            assert_same_split(pattern, &text);
        }
        assert_dispatch_agrees(&text);
    }

    #[test]
    fn random_unicode_texts(text in "\\PC{0,60}") {
        for pattern in PATTERNS {
            assert_same_split(pattern, &text);
        }
        assert_dispatch_agrees(&text);
    }

    #[test]
    fn random_mostly_ascii_texts(text in ascii_text()) {
        for pattern in PATTERNS {
            assert_same_split(pattern, &text);
        }
        assert_dispatch_agrees(&text);
    }

    #[test]
    fn the_dispatch_agrees_on_any_characters(text in any::<String>()) {
        assert_dispatch_agrees(&text);
    }

    #[test]
    fn folding_cuts_the_pieces_next_cuts(text in prop_oneof![ascii_text(), runs_text(), any::<String>()], skip in 0..4usize) {
        for pattern in [Pattern::Cl100k, Pattern::O200k, Pattern::Qwen2, Pattern::Gpt2, Pattern::Gpt2Digits] {
            let mut pieces = Pieces::new(pattern, &text);
            // Folding the rest of an iterator some pieces were taken from.
            let taken: Vec<&str> = pieces.by_ref().take(skip).collect();
            let folded = pieces.fold(taken, |mut all, piece| {
                all.push(piece);
                all
            });
            let mut stepped = Vec::new();
            // A `for` loop calls `next`, piece by piece.
            for piece in Pieces::new(pattern, &text) {
                stepped.push(piece);
            }
            prop_assert_eq!(folded, stepped, "{:?}", pattern);
        }
    }
}
