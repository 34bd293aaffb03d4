//! The classifier on any text and any path: never panics, is deterministic, and a conclusive
//! extension decides whatever the content.

#![no_main]

use ctx_runtime::classify::{Language, classify, extension};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, Option<&str>)| {
    let (text, path) = input;
    let language = classify(text, path);
    assert_eq!(language, classify(text, path), "classification is not deterministic");
    assert!(["sql", "dotnet", "unknown"].contains(&language.label()));
    if let Some(ext) = path.and_then(extension) {
        assert!(!ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric() && !c.is_ascii_uppercase()));
        match ext.as_str() {
            "sql" => assert_eq!(language, Language::Sql, "a .sql path must classify as SQL"),
            "csproj" => assert_eq!(language, Language::Dotnet, "a .csproj path must classify as .NET"),
            "py" | "md" | "json" => assert_eq!(language, Language::Unknown, "a .{ext} path is never ours"),
            _ => {}
        }
    }
});
