//! Property tests of the compactors.
//!
//! Generated programs are built from known pieces — code tokens, string literals with hostile
//! content, comments, whitespace — so the expected output is known without lexing: the code and
//! literals verbatim, comments gone, each separator run reduced to one newline or space. Arbitrary
//! strings check the invariants that must hold for any input: no panic, idempotence, never more
//! tokens, and nothing but deletion (the output is a subsequence of the input).

use ctx_runtime::classify::Language;
use ctx_runtime::compact::{self, dotnet, sql};
use ctx_runtime::tokens::{Encoding, TokenCounter};
use proptest::prelude::*;

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

/// One generated piece: verbatim text, or a separator (`newline` when it breaks the line).
#[derive(Debug, Clone)]
enum Item {
    Text(String),
    Gap { text: String, newline: bool },
}

fn whitespace() -> impl Strategy<Value = Item> {
    prop::collection::vec(prop::sample::select(vec![" ", "  ", "\t", "\n", "\r\n", "\n\n    "]), 1..4).prop_map(
        |parts| {
            let text = parts.concat();
            let newline = text.contains('\n');
            Item::Gap { text, newline }
        },
    )
}

/// `text` without any of `patterns`, removed until none is left (a removal can join two halves
/// into a new occurrence).
fn scrub(text: String, patterns: &[&str]) -> String {
    let mut text = text;
    while let Some(p) = patterns.iter().find(|p| text.contains(**p)) {
        text = text.replace(p, "");
    }
    text
}

/// Characters that are dangerous inside literals: comment openers, quotes of the other kinds,
/// brackets, braces, whitespace.
fn hostile(extra: &'static [&'static str]) -> impl Strategy<Value = String> {
    let mut alphabet = vec![
        "a", "Z", "0", " ", "  ", "-", "--", "/", "/*", "*/", "*", "[", "]", "`", "{", "}", "é", "\n", ";", "#", "@",
    ];
    alphabet.extend_from_slice(extra);
    prop::collection::vec(prop::sample::select(alphabet), 0..12).prop_map(|v| v.concat())
}

fn sql_ident() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "SELECT",
        "FROM",
        "dbo.Invoices",
        "x",
        "@InvoiceId",
        "#tmp",
        "N",
        "1.5",
        "(",
        ")",
        ",",
        "=",
        "+",
        ";",
        "GO",
    ])
    .prop_map(str::to_owned)
}

fn csharp_ident() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "var",
        "Total",
        "invoice.Lines",
        "@class",
        "N",
        "1.5m",
        "(",
        ")",
        "{",
        "}",
        ",",
        "=",
        "+",
        ";",
        "=>",
    ])
    .prop_map(str::to_owned)
}

fn sql_literal() -> impl Strategy<Value = String> {
    prop_oneof![
        hostile(&["''", "\""]).prop_map(|c| format!("'{c}'")),
        hostile(&["''", "\""]).prop_map(|c| format!("N'{c}'")),
        hostile(&["'", "\"\""]).prop_map(|c| format!("\"{}\"", c.replace('"', "\"\""))),
        hostile(&["'", "\""]).prop_map(|c| format!("[{}]", c.replace(']', "]]"))),
        hostile(&["'", "\""]).prop_map(|c| format!("$tag${}$tag$", c.replace('$', ""))),
        hostile(&["'"]).prop_map(|c| format!("/*+ {} */", scrub(c, &["*/"]))),
    ]
}

fn sql_comment() -> impl Strategy<Value = Item> {
    prop_oneof![
        hostile(&["'", "\""])
            .prop_map(|c| Item::Gap { text: format!("--{}\n", c.replace(['\n', '\r'], "")), newline: true }),
        hostile(&["'", "\""])
            .prop_map(|c| Item::Gap { text: format!("/* {} */", scrub(c, &["*/", "/*"])), newline: false }),
        hostile(&["'"]).prop_map(|c| {
            let c = scrub(c, &["*/", "/*"]);
            Item::Gap { text: format!("/* outer /* {c} */ {c} */"), newline: false }
        }),
    ]
}

fn csharp_literal() -> impl Strategy<Value = String> {
    let regular = hostile(&["'", "\\\"", "\\\\"]).prop_map(|c| format!("\"{}\"", c.replace('\n', "\\n")));
    let verbatim = hostile(&["'", "\"\"", "\\"]).prop_map(|c| format!("@\"{c}\""));
    let raw = hostile(&["'", "\"", "\"\""]).prop_map(|c| format!("\"\"\"\n{}\n\"\"\"", scrub(c, &["\"\"\""])));
    let interpolated = (hostile(&["'"]), prop::sample::select(vec!["x", "x:N2", "(a ? \"}\" : \"{\")", "$\"{y}\""]))
        .prop_map(|(c, hole)| format!("$\"{}{{{hole}}}{}\"", c.replace(['{', '}'], "").replace('\n', " "), "{{}}"));
    let chars = prop::sample::select(vec!["'\"'", "'\\''", "'/'", "'{'", "'\\u0041'"]).prop_map(str::to_owned);
    prop_oneof![regular, verbatim, raw, interpolated, chars]
}

fn csharp_comment() -> impl Strategy<Value = Item> {
    prop_oneof![
        hostile(&["'", "\""])
            .prop_map(|c| Item::Gap { text: format!("//{}\n", c.replace(['\n', '\r'], "")), newline: true }),
        hostile(&["'", "\""]).prop_map(|c| Item::Gap {
            text: format!("/// <summary>{}</summary>\n", c.replace(['\n', '\r'], "")),
            newline: true
        }),
        hostile(&["'", "\""]).prop_map(|c| Item::Gap { text: format!("/* {} */", scrub(c, &["*/"])), newline: false }),
        Just(Item::Gap { text: "\n#region Queries\n".to_owned(), newline: true }),
    ]
}

/// Text items separated by at least one separator, so that the generator never glues two pieces
/// into a token the lexer would read differently.
fn program(text: BoxedStrategy<String>, gap: BoxedStrategy<Item>) -> impl Strategy<Value = Vec<Item>> {
    let gaps = prop::collection::vec(prop_oneof![whitespace(), gap], 1..3);
    prop::collection::vec((text, gaps), 1..16).prop_map(|pairs| {
        let mut items = Vec::new();
        for (t, gs) in pairs {
            items.push(Item::Text(t));
            items.extend(gs);
        }
        items
    })
}

fn render(items: &[Item]) -> String {
    items
        .iter()
        .map(|i| match i {
            Item::Text(t) | Item::Gap { text: t, .. } => t.as_str(),
        })
        .collect()
}

fn expected(items: &[Item]) -> String {
    let mut out = String::new();
    let mut pending: Option<bool> = None;
    for item in items {
        match item {
            Item::Gap { newline, .. } => pending = Some(pending.unwrap_or(false) || *newline),
            Item::Text(t) => {
                if let Some(nl) = pending.take()
                    && !out.is_empty()
                {
                    out.push(if nl { '\n' } else { ' ' });
                }
                out.push_str(t);
            }
        }
    }
    out
}

/// Whether `small`, whitespace aside, can be obtained from `big` by deleting characters (a
/// dropped comment may leave a space where there was none).
fn is_subsequence(small: &str, big: &str) -> bool {
    let mut it = big.chars().filter(|c| !c.is_whitespace());
    small.chars().filter(|c| !c.is_whitespace()).all(|c| it.any(|b| b == c))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn sql_output_is_exactly_code_and_literals(items in program(prop_oneof![sql_ident(), sql_literal()].boxed(), sql_comment().boxed())) {
        let input = render(&items);
        prop_assert_eq!(sql::strip(&input).into_owned(), expected(&items), "input: {:?}", input);
    }

    #[test]
    fn csharp_output_is_exactly_code_and_literals(items in program(prop_oneof![csharp_ident(), csharp_literal()].boxed(), csharp_comment().boxed())) {
        let input = render(&items);
        let out = dotnet::strip(&input, dotnet::DotnetSyntax::CSharp).into_owned();
        prop_assert_eq!(out, expected(&items), "input: {:?}", input);
    }

    #[test]
    fn generated_programs_never_gain_tokens_and_are_stable(items in program(prop_oneof![sql_ident(), sql_literal()].boxed(), sql_comment().boxed())) {
        let input = render(&items);
        let c = compact::compact(Language::Sql, &input, None, &counter()).unwrap();
        prop_assert!(c.tokens_after <= c.tokens_before);
        prop_assert_eq!(c.tokens_before, counter().count(&input).unwrap());
        prop_assert_eq!(c.tokens_after, counter().count(&c.text).unwrap());
        let again = compact::compact(Language::Sql, &c.text, None, &counter()).unwrap();
        prop_assert_eq!(&again.text, &c.text);
    }
}

/// A compactor's pure transformation.
type Strip = fn(&str) -> String;

/// Arbitrary text biased towards the characters the lexers care about.
fn arbitrary_text() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        4 => prop::sample::select(vec![
            "'", "''", "\"", "\"\"\"", "[", "]", "`", "$", "$$", "@", "{", "}", "{{", "}}", "(", ")", "--", "//", "///",
            "/*", "*/", "/*+", "*", "\\", "#", "#region", "#if", "\n", "\r\n", "\r", " ", "\t", "@*", "*@", "<!--", "-->",
            "<", ">", "E", "N", "q", "x", ":", "é", "😀",
        ]).prop_map(str::to_owned),
        1 => any::<String>(),
    ];
    prop::collection::vec(token, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_input_strips_without_panic_only_deleting_and_idempotently(text in arbitrary_text()) {
        let strips: [(&str, Strip); 4] = [
            ("sql", |t| sql::strip(t).into_owned()),
            ("csharp", |t| dotnet::strip(t, dotnet::DotnetSyntax::CSharp).into_owned()),
            ("razor", |t| dotnet::strip(t, dotnet::DotnetSyntax::Razor).into_owned()),
            ("xml", |t| dotnet::strip(t, dotnet::DotnetSyntax::Xml).into_owned()),
        ];
        for (name, strip) in strips {
            let once = strip(&text);
            prop_assert!(is_subsequence(&once, &text), "{}: {:?} -> {:?} adds text", name, text, once);
            let twice = strip(&once);
            prop_assert_eq!(&twice, &once, "{} is not idempotent on {:?}", name, text);
        }
    }

    #[test]
    fn any_input_never_gains_tokens(text in arbitrary_text(), lang in prop::sample::select(vec![Language::Sql, Language::Dotnet, Language::DotnetWithSql, Language::Unknown])) {
        let c = compact::compact(lang, &text, None, &counter()).unwrap();
        prop_assert!(c.tokens_after <= c.tokens_before);
        prop_assert_eq!(c.changed, c.text != text);
        let again = compact::compact(lang, &c.text, None, &counter()).unwrap();
        prop_assert_eq!(again.text, c.text);
    }
}

/// A C# literal that may hold a Razor comment opener or a whole Razor comment.
fn razor_literal() -> impl Strategy<Value = String> {
    let with_comment = || hostile(&["'", "\"\"", "\\", "@*", "*@", "@* c *@", "\n@* c *@\n"]);
    prop_oneof![
        csharp_literal(),
        with_comment().prop_map(|c| format!("@\"{c}\"")),
        with_comment().prop_map(|c| format!("$@\"{{x}}{}\"", c.replace(['{', '}'], ""))),
        with_comment().prop_map(|c| format!("\"\"\"\n{}\n\"\"\"", scrub(c, &["\"\"\""]))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Razor comments go, but never out of a C# string: every code block with a literal comes
    /// out byte for byte (issue 14, item 6).
    #[test]
    fn razor_strip_never_changes_a_csharp_literal(
        pieces in prop::collection::vec(prop_oneof![
            2 => razor_literal().prop_map(|l| (format!("@{{ var s = {l}; }}\n"), true)),
            1 => prop::sample::select(vec![
                "<p class=\"a\">Hi</p>\n", "<a title=\"x @* y\">z</a>\n", "<p>It's 5\" tall</p>\n", "@* note *@\n",
                "<p>@Model.Name</p> @* inline *@\n", "// see http://x\n",
            ]).prop_map(|m| (m.to_owned(), false)),
        ], 0..8),
    ) {
        let text: String = pieces.iter().map(|(p, _)| p.as_str()).collect();
        let out = dotnet::strip(&text, dotnet::DotnetSyntax::Razor).into_owned();
        let mut from = 0;
        for (piece, literal) in &pieces {
            if *literal {
                let Some(at) = out[from..].find(piece.as_str()) else {
                    return Err(TestCaseError::fail(format!("{piece:?} changed: {text:?} -> {out:?}")));
                };
                from += at + piece.len();
            }
        }
    }
}
