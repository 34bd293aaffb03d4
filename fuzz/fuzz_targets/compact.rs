//! The compactors on any text: never panic, never return more tokens than they were given, and
//! every count they report is the exact count of the text it describes.

#![no_main]

use ctx_runtime::classify::Language;
use ctx_runtime::compact::{self, dotnet, sql};
use ctx_runtime::{Encoding, TokenCounter};
use libfuzzer_sys::fuzz_target;

const PATHS: [Option<&str>; 6] = [
    None,
    Some("db/usp_Invoice.sql"),
    Some("src/Billing.cs"),
    Some("Views/Index.cshtml"),
    Some("App.csproj"),
    Some("notes.md"),
];

fuzz_target!(|input: (u8, &str)| {
    let (selector, text) = input;
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let language =
        [Language::Sql, Language::Dotnet, Language::DotnetWithSql, Language::Unknown][usize::from(selector % 4)];
    let path = PATHS[usize::from(selector / 4) % PATHS.len()];

    let out = compact::compact(language, text, path, &counter).expect("counting never fails on a str");
    assert_eq!(out.tokens_before, counter.count(text).unwrap(), "tokens_before is not the input's count");
    assert_eq!(out.tokens_after, counter.count(&out.text).unwrap(), "tokens_after is not the output's count");
    assert!(out.tokens_after <= out.tokens_before, "compaction added tokens");
    assert_eq!(out.changed, out.text != text, "`changed` disagrees with the text");
    if language == Language::Unknown {
        assert!(!out.changed, "an unknown text was changed");
    }

    // The strippers on their own: total functions, and a borrowed result is the input.
    if let std::borrow::Cow::Borrowed(s) = sql::strip(text) {
        assert_eq!(s, text);
    }
    let syntax = dotnet::DotnetSyntax::detect(text, path);
    if let std::borrow::Cow::Borrowed(s) = dotnet::strip(text, syntax) {
        assert_eq!(s, text);
    }
});
