//! Property tests of the compactors.
//!
//! Generated programs are built from known pieces — code tokens, string literals with hostile
//! content, comments, whitespace — so the expected output is known without lexing: the code and
//! literals verbatim, comments gone, each separator run reduced to one newline or space. Arbitrary
//! strings check the invariants that must hold for any input: no panic, idempotence, never more
//! tokens, and nothing but deletion (the output is a subsequence of the input).

use ctx_runtime::classify::Language;
use ctx_runtime::compact::{self, BUILTIN_COMPACTORS, CompactRequest, CompactorRegistry, NodeLanguage, dotnet, sql};
use ctx_runtime::state::NodeText;
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
    hostile_with(extra, true)
}

/// [`hostile`], with or without `#` (which, after a line break inside a literal or comment, would
/// start a directive line if the text were disabled).
fn hostile_with(extra: &'static [&'static str], hash: bool) -> impl Strategy<Value = String> {
    let mut alphabet =
        vec!["a", "Z", "0", " ", "  ", "-", "--", "/", "/*", "*/", "*", "[", "]", "`", "{", "}", "é", "\n", ";", "@"];
    if hash {
        alphabet.push("#");
    }
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
    csharp_literal_with(true)
}

fn csharp_literal_with(hash: bool) -> impl Strategy<Value = String> {
    let hostile = move |extra| hostile_with(extra, hash);
    let regular = hostile(&["'", "\\\"", "\\\\"]).prop_map(|c| format!("\"{}\"", c.replace('\n', "\\n")));
    let verbatim = hostile(&["'", "\"\"", "\\"]).prop_map(|c| format!("@\"{c}\""));
    let raw = hostile(&["'", "\"", "\"\""]).prop_map(|c| format!("\"\"\"\n{}\n\"\"\"", scrub(c, &["\"\"\""])));
    let interpolated = (hostile(&["'"]), prop::sample::select(vec!["x", "x:N2", "(a ? \"}\" : \"{\")", "$\"{y}\""]))
        .prop_map(|(c, hole)| format!("$\"{}{{{hole}}}{}\"", c.replace(['{', '}'], "").replace('\n', " "), "{{}}"));
    let chars = prop::sample::select(vec!["'\"'", "'\\''", "'/'", "'{'", "'\\u0041'"]).prop_map(str::to_owned);
    prop_oneof![regular, verbatim, raw, interpolated, chars]
}

/// Every line terminator of C#: a `//` comment ends at each (issue 26, item 2).
const CSHARP_NEWLINES: [&str; 6] = ["\n", "\r\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"];

fn csharp_newline() -> impl Strategy<Value = &'static str> {
    prop::sample::select(CSHARP_NEWLINES.to_vec())
}

fn csharp_comment() -> impl Strategy<Value = Item> {
    prop_oneof![
        3 => csharp_comment_with(true),
        1 => Just(Item::Gap { text: "\n#region Queries\n".to_owned(), newline: true }),
    ]
}

/// `//`, `///` and `/* */` comments, ended by any C# line terminator.
fn csharp_comment_with(hash: bool) -> impl Strategy<Value = Item> {
    let hostile = move |extra| hostile_with(extra, hash);
    prop_oneof![
        (hostile(&["'", "\""]), csharp_newline())
            .prop_map(|(c, nl)| Item::Gap { text: format!("//{}{nl}", c.replace(['\n', '\r'], "")), newline: true }),
        (hostile(&["'", "\""]), csharp_newline()).prop_map(|(c, nl)| Item::Gap {
            text: format!("/// <summary>{}</summary>{nl}", c.replace(['\n', '\r'], "")),
            newline: true
        }),
        hostile(&["'", "\""]).prop_map(|c| Item::Gap { text: format!("/* {} */", scrub(c, &["*/"])), newline: false }),
    ]
}

/// C# whitespace: line terminators of every kind, Unicode spaces.
fn csharp_whitespace() -> impl Strategy<Value = Item> {
    let parts = vec![" ", "  ", "\t", "\n", "\r\n", "\n\n    ", "\u{85}", "\u{2028}", "\u{2029}", "\u{a0}", "\u{3000}"];
    prop::collection::vec(prop::sample::select(parts), 1..4).prop_map(|parts| {
        let text = parts.concat();
        let newline = text.contains(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']);
        Item::Gap { text, newline }
    })
}

/// Text items separated by at least one separator, so that the generator never glues two pieces
/// into a token the lexer would read differently.
fn program(text: BoxedStrategy<String>, gap: BoxedStrategy<Item>) -> impl Strategy<Value = Vec<Item>> {
    program_with(text, gap, whitespace().boxed())
}

fn program_with(
    text: BoxedStrategy<String>,
    gap: BoxedStrategy<Item>,
    whitespace: BoxedStrategy<Item>,
) -> impl Strategy<Value = Vec<Item>> {
    let gaps = prop::collection::vec(prop_oneof![whitespace, gap], 1..3);
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
    fn csharp_output_is_exactly_code_and_literals(items in program_with(prop_oneof![csharp_ident(), csharp_literal()].boxed(), csharp_comment().boxed(), csharp_whitespace().boxed())) {
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
            "<", ">", "E", "N", "q", "x", ":", "é", "😀", "\n#if A\n", "\n#else\n", "\n#endif\n", "@\"", "\u{85}",
            "\u{2028}", "\u{2029}", "\u{a0}", "\u{feff}", "<Project>", "<PropertyGroup>", "</PropertyGroup>", "<P>", "</P>",
            "<![CDATA[", "]]>",
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// `manage_context_budget` reaches the language rules through the one `Compactor` trait and
    /// the registry: what it gets is exactly what the rules give.
    #[test]
    fn the_registry_compacts_code_as_the_language_rules_do(text in arbitrary_text(), lang in prop::sample::select(vec![Language::Sql, Language::Dotnet, Language::DotnetWithSql])) {
        let node = NodeText::new("n", text.clone());
        let through_trait = CompactorRegistry::new().compact(&NodeLanguage::Code(lang), &node, &counter()).unwrap();
        prop_assert_eq!(through_trait, compact::compact(lang, &text, None, &counter()).unwrap());
    }

    /// Without a budget every built-in is lossless (the code ones and `truncate` only delete) and
    /// never gains tokens; with one, the answer fits and is a prefix of the lossless answer.
    #[test]
    fn builtins_delete_without_a_budget_and_fit_with_one(text in arbitrary_text(), max in 0usize..30, name in prop::sample::select(BUILTIN_COMPACTORS.to_vec())) {
        let c = counter();
        let registry = CompactorRegistry::new();
        let compactor = registry.get(name).unwrap();
        let lossless = compactor.compact(&CompactRequest::new("n", &text, &c)).unwrap();
        if ["truncate", "sql", "dotnet", "code"].contains(&name) {
            prop_assert!(is_subsequence(&lossless, &text), "{}: {:?} -> {:?} adds text", name, text, lossless);
        }
        let node = NodeText::new("n", text.clone());
        let guarded = registry.compact(&NodeLanguage::Custom(name.to_owned()), &node, &c).unwrap();
        prop_assert!(guarded.tokens_after <= guarded.tokens_before);
        let fitted = compactor.compact(&CompactRequest::new("n", &text, &c).with_max_tokens(max)).unwrap();
        prop_assert!(c.count(&fitted).unwrap() <= max, "{}: {:?} over {}", name, fitted, max);
        let kept = if c.count(&lossless).unwrap() <= c.count(&text).unwrap() { lossless.as_ref() } else { text.as_str() };
        prop_assert!(kept.starts_with(fitted.as_ref()), "{}: {:?} is no prefix of {:?}", name, fitted, kept);
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

// ---------------------------------------------------------------------------------------------
// C# conditional compilation (issue 26, items 1 and 2)
// ---------------------------------------------------------------------------------------------

/// One region between directive lines of a generated C# program.
#[derive(Debug, Clone)]
enum Region {
    /// Code pieces, literals and comments that are complete within the region.
    Code(Vec<Item>),
    /// Text that is not C#: compiled only if its branch is disabled. Its lines never start with
    /// `#`, but it holds comment and string openers that never close.
    Disabled(String),
}

/// A generated program: regions and the directive lines between them.
#[derive(Debug, Clone)]
enum Part {
    Region(Region),
    /// A directive line: the line break and blanks before it, the directive, the line break after.
    Directive {
        before: String,
        text: String,
        after: String,
    },
}

fn directive(texts: &'static [&'static str]) -> impl Strategy<Value = Part> {
    (
        csharp_newline(),
        prop::sample::select(vec!["", "  ", "\t", "\u{a0}"]),
        prop::sample::select(texts.to_vec()),
        csharp_newline(),
    )
        .prop_map(|(nl, indent, text, after)| Part::Directive {
            before: format!("{nl}{indent}"),
            text: text.to_owned(),
            after: after.to_owned(),
        })
}

/// Disabled text: lines that open comments and strings and never close them.
fn disabled_text() -> impl Strategy<Value = Region> {
    let first = prop::sample::select(vec![
        "x",
        "/*",
        "@\"",
        "\"",
        "//",
        "'",
        "*/",
        "$\"",
        "\"\"\"",
        "/* c */ #endif",
        "/* c */",
        "don't",
    ]);
    let rest = prop::collection::vec(
        prop::sample::select(vec![
            " ",
            "x",
            "/*",
            "*/",
            "@\"",
            "\"",
            "//",
            "'",
            "#",
            "#endif",
            "{",
            "}",
            "$@\"",
            "/* c */",
            "https://a/b",
        ]),
        0..6,
    );
    let line = (first, rest).prop_map(|(f, r)| format!("{f}{}", r.concat()));
    (prop::collection::vec((line, csharp_newline()), 1..4)).prop_map(|lines| {
        let mut text = String::new();
        for (i, (line, nl)) in lines.iter().enumerate() {
            if i > 0 {
                text.push_str(nl);
            }
            text.push_str(line);
        }
        Region::Disabled(text)
    })
}

fn code_region() -> impl Strategy<Value = Region> {
    program_with(
        prop_oneof![csharp_ident(), csharp_literal_with(false)].boxed(),
        csharp_comment_with(false).boxed(),
        csharp_whitespace().boxed(),
    )
    .prop_map(Region::Code)
}

/// `#if` … (`#elif` …)* (`#else` …)? `#endif`, each branch code, disabled text or a nested block.
fn conditional(depth: u32) -> BoxedStrategy<Vec<Part>> {
    let body = if depth == 0 {
        prop_oneof![
            code_region().prop_map(|r| vec![Part::Region(r)]),
            disabled_text().prop_map(|r| vec![Part::Region(r)])
        ]
        .boxed()
    } else {
        prop_oneof![
            2 => code_region().prop_map(|r| vec![Part::Region(r)]),
            2 => disabled_text().prop_map(|r| vec![Part::Region(r)]),
            1 => conditional(depth - 1),
        ]
        .boxed()
    };
    let open = directive(&["#if A", "#if (A && !B)", "#if NEVER_DEFINED // off", "#if(DEBUG)"]);
    let elifs = prop::collection::vec((directive(&["#elif B", "#elif C // c"]), body.clone()), 0..2);
    let otherwise = prop::option::of((directive(&["#else", "#else // other"]), body.clone()));
    let close = directive(&["#endif", "#endif // A"]);
    (open, body, elifs, otherwise, close)
        .prop_map(|(open, body, elifs, otherwise, close)| {
            let mut parts = vec![open];
            parts.extend(body);
            for (d, b) in elifs.into_iter().chain(otherwise) {
                parts.push(d);
                parts.extend(b);
            }
            parts.push(close);
            parts
        })
        .boxed()
}

fn conditional_program() -> impl Strategy<Value = Vec<Part>> {
    prop::collection::vec((prop::option::of(code_region()), conditional(1)), 1..4).prop_flat_map(|blocks| {
        code_region().prop_map(move |last| {
            let mut parts = Vec::new();
            for (code, block) in blocks.clone() {
                parts.extend(code.map(Part::Region));
                parts.extend(block);
            }
            parts.push(Part::Region(last));
            parts
        })
    })
}

fn render_parts(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|p| match p {
            Part::Region(Region::Code(items)) => render(items),
            Part::Region(Region::Disabled(text)) => text.clone(),
            Part::Directive { before, text, after } => format!("{before}{text}{after}"),
        })
        .collect()
}

fn is_csharp_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}' || c == '\u{1a}'
}

/// `text` with every C# line terminator as `\n`.
fn unify_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace(['\r', '\u{85}', '\u{2028}', '\u{2029}'], "\n")
}

/// The lines of `text` whose first non-blank character is `#` (the directive lines, in any
/// reading), trimmed, and the text between them, newlines unified and trimmed.
fn split_at_directives(text: &str) -> (Vec<String>, Vec<String>) {
    let mut directives = Vec::new();
    let mut regions = vec![String::new()];
    for line in unify_newlines(text).split('\n') {
        let trimmed = line.trim_matches(is_csharp_space);
        if trimmed.starts_with('#') {
            directives.push(trimmed.to_owned());
            regions.push(String::new());
        } else if let Some(region) = regions.last_mut() {
            region.push_str(line);
            region.push('\n');
        }
    }
    let regions = regions.into_iter().map(|r| r.trim_matches(is_csharp_space).to_owned()).collect();
    (directives, regions)
}

/// What the compactor may make of a code region: compacted, or compacted up to a construct
/// (a literal or comment it was unsure of) and verbatim from there on.
fn code_outcomes(items: &[Item]) -> Vec<String> {
    (0..=items.len())
        .map(|j| {
            let mut out = expected(&items[..j]);
            let trailing: Vec<bool> = items[..j]
                .iter()
                .rev()
                .map_while(|i| match i {
                    Item::Gap { newline, .. } => Some(*newline),
                    Item::Text(_) => None,
                })
                .collect();
            if !out.is_empty() && !trailing.is_empty() {
                out.push(if trailing.contains(&true) { '\n' } else { ' ' });
            }
            out.push_str(&render(&items[j..]));
            unify_newlines(&out).trim_matches(is_csharp_space).to_owned()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Compaction never changes a token outside real comments, whatever symbols are defined:
    /// every directive line stays, in order and as written; a region of code comes out compacted
    /// (or verbatim from a construct the compactor was unsure of); disabled text only loses
    /// characters, and never gains a directive line. Branches hold code, nested blocks, or text
    /// with unclosed `/*`, `@"`, `"`, `//`; lines end in every C# line terminator.
    #[test]
    fn csharp_compaction_never_changes_a_token_across_conditional_compilation(parts in conditional_program()) {
        let input = render_parts(&parts);
        let out = dotnet::strip(&input, dotnet::DotnetSyntax::CSharp).into_owned();
        let (directives, regions) = split_at_directives(&out);
        let expected_directives: Vec<String> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Directive { text, .. } => Some(text.clone()),
                Part::Region(_) => None,
            })
            .collect();
        prop_assert_eq!(&directives, &expected_directives, "input: {:?}\noutput: {:?}", input, out);
        // The regions of the input, between its directives.
        let mut input_regions: Vec<Option<&Region>> = vec![None];
        for p in &parts {
            match p {
                Part::Directive { .. } => input_regions.push(None),
                Part::Region(r) => *input_regions.last_mut().expect("a region") = Some(r),
            }
        }
        prop_assert_eq!(input_regions.len(), regions.len());
        for (want, got) in input_regions.iter().zip(&regions) {
            match want {
                None => prop_assert_eq!(got, "", "input: {:?}\noutput: {:?}", input, out),
                Some(Region::Code(items)) => {
                    let outcomes = code_outcomes(items);
                    prop_assert!(outcomes.contains(got), "region {:?} became {:?}\ninput: {:?}\noutput: {:?}", render(items), got, input, out);
                }
                Some(Region::Disabled(text)) => {
                    prop_assert!(is_subsequence(got, text), "disabled {:?} became {:?}", text, got);
                }
            }
        }
        let again = dotnet::strip(&out, dotnet::DotnetSyntax::CSharp).into_owned();
        prop_assert_eq!(again, out.clone(), "not idempotent on {:?}", input);
    }
}

// ---------------------------------------------------------------------------------------------
// MSBuild: comments that are part of a value (issue 26, item 3)
// ---------------------------------------------------------------------------------------------

/// A property or metadata value, as written and as compaction must leave it.
fn msbuild_value() -> impl Strategy<Value = (String, String)> {
    let text_piece =
        prop::sample::select(vec!["CS1591;", "x", " ", "\n      ", "&lt;", "$(A)", "<!-- CS0618; -->", "<!---->"]);
    let text = prop::collection::vec(text_piece, 0..6).prop_map(|pieces| {
        let written = pieces.concat();
        let is_comment = |p: &&str| p.starts_with("<!--");
        let has_text = pieces.iter().any(|p| !is_comment(p) && !p.trim().is_empty());
        // MSBuild reads text and comments as the text: the comments go when there is text.
        let kept = if has_text { pieces.iter().filter(|p| !is_comment(p)).copied().collect() } else { written.clone() };
        (written, kept)
    });
    // A value holding markup is read as inner XML, comments included: nothing changes.
    let xml = prop::sample::select(vec![
        "<Root><!-- c --><A>1</A></Root>",
        "\n        <X>\n          <!-- c -->\n          <Y />\n        </X>\n      ",
        "<!-- c --><![CDATA[x]]>",
        "a<?pi x?><!-- c -->",
        "<!-- c --><Z/>",
    ])
    .prop_map(|v| (v.to_owned(), v.to_owned()));
    prop_oneof![text, xml]
}

/// A comment between elements: a whole line, or after an element on its line.
fn structural_comment() -> impl Strategy<Value = Option<bool>> {
    prop::option::of(any::<bool>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// In a generated project, comments between elements go and every property and metadata
    /// value comes out as MSBuild reads it: a value with markup byte for byte, comments included.
    #[test]
    fn msbuild_values_keep_what_msbuild_reads(
        props in prop::collection::vec((msbuild_value(), structural_comment()), 0..6),
        metadata in prop::collection::vec((msbuild_value(), structural_comment()), 0..4),
        top in structural_comment(),
    ) {
        // (written, expected) pairs of lines.
        let mut lines: Vec<(String, Option<String>)> = Vec::new();
        let comment = |lines: &mut Vec<(String, Option<String>)>, c: Option<bool>, indent: &str, line: String| match c {
            Some(true) => {
                lines.push((format!("{indent}<!-- alone -->"), None));
                lines.push((line.clone(), Some(line)));
            }
            Some(false) => lines.push((format!("{line} <!-- after -->"), Some(format!("{line} ")))),
            None => lines.push((line.clone(), Some(line))),
        };
        let same = |lines: &mut Vec<(String, Option<String>)>, line: &str| lines.push((line.to_owned(), Some(line.to_owned())));
        same(&mut lines, "<Project Sdk=\"Microsoft.NET.Sdk\">");
        comment(&mut lines, top, "  ", "  <PropertyGroup>".to_owned());
        for (i, ((written, kept), c)) in props.iter().enumerate() {
            let line = format!("    <P{i}>{written}</P{i}>");
            let want = format!("    <P{i}>{kept}</P{i}>");
            match c {
                Some(true) => {
                    lines.push(("    <!-- alone -->".to_owned(), None));
                    lines.push((line, Some(want)));
                }
                Some(false) => lines.push((format!("{line} <!-- after -->"), Some(format!("{want} ")))),
                None => lines.push((line, Some(want))),
            }
        }
        same(&mut lines, "  </PropertyGroup>");
        same(&mut lines, "  <ItemGroup>");
        same(&mut lines, "    <None Include=\"a.txt\">");
        for (i, ((written, kept), c)) in metadata.iter().enumerate() {
            let line = format!("      <M{i}>{written}</M{i}>");
            let want = format!("      <M{i}>{kept}</M{i}>");
            match c {
                Some(true) => {
                    lines.push(("      <!-- alone -->".to_owned(), None));
                    lines.push((line, Some(want)));
                }
                Some(false) => lines.push((format!("{line} <!-- after -->"), Some(format!("{want} ")))),
                None => lines.push((line, Some(want))),
            }
        }
        same(&mut lines, "    </None>");
        same(&mut lines, "  </ItemGroup>");
        same(&mut lines, "</Project>");
        let input: String = lines.iter().map(|(l, _)| format!("{l}\n")).collect();
        let want: String = lines.iter().filter_map(|(_, w)| w.as_ref().map(|w| format!("{w}\n"))).collect();
        let out = dotnet::strip(&input, dotnet::DotnetSyntax::Xml).into_owned();
        prop_assert_eq!(&out, &want, "input: {:?}", input);
        prop_assert_eq!(dotnet::strip(&out, dotnet::DotnetSyntax::Xml).into_owned(), out.clone());
    }
}
