//! The classifier and the compactors on the sample invoicing code base (`examples/codebase`):
//! every file is classified as its kind says, with and without its path; compaction keeps every
//! literal and is stable; and the token savings per language are measured and printed
//! (`cargo test -p ctx-runtime --test compact_corpus -- --nocapture`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ctx_runtime::classify::{Language, classify};
use ctx_runtime::compact;
use ctx_runtime::tokens::{Encoding, TokenCounter};

fn corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/codebase");
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("examples/codebase is readable") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let name = path.strip_prefix(&root).expect("under root").to_string_lossy().replace('\\', "/");
                files.push((name, std::fs::read_to_string(&path).expect("UTF-8 sample file")));
            }
        }
    }
    files.sort();
    assert!(files.len() >= 30, "the sample code base has {} files", files.len());
    files
}

fn expected_language(path: &str) -> Language {
    const WITH_SQL: [&str; 3] = ["InvoiceRepository.cs", "PaymentRepository.cs", "CustomerQueries.cs"];
    match path.rsplit_once('.').map(|(_, e)| e) {
        Some("sql") => Language::Sql,
        Some("cs") if WITH_SQL.iter().any(|f| path.ends_with(&format!("/{f}"))) => Language::DotnetWithSql,
        Some("cs" | "cshtml" | "csproj") => Language::Dotnet,
        _ => Language::Unknown,
    }
}

#[test]
fn every_sample_file_is_classified_with_or_without_its_path() {
    let mut kinds = BTreeMap::new();
    for (path, text) in corpus() {
        let expected = expected_language(&path);
        assert_eq!(classify(&text, Some(&path)), expected, "{path} (with path)");
        assert_eq!(classify(&text, None), expected, "{path} (content only)");
        *kinds.entry(format!("{expected:?}")).or_insert(0) += 1;
    }
    // The corpus exercises every class.
    assert_eq!(kinds.len(), 4, "{kinds:?}");
}

#[test]
fn compaction_keeps_literals_and_is_stable_and_saves_tokens() {
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let mut totals: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for (path, text) in corpus() {
        let language = classify(&text, Some(&path));
        let c = compact::compact(language, &text, Some(&path), &counter).unwrap();
        assert!(c.tokens_after <= c.tokens_before, "{path}");
        assert_eq!(c.tokens_after, counter.count(&c.text).unwrap(), "{path}");
        let again = compact::compact(language, &c.text, Some(&path), &counter).unwrap();
        assert_eq!(again.text, c.text, "{path}: compaction is not idempotent");
        if language == Language::Unknown {
            assert!(!c.changed, "{path}: unknown text was changed");
        }
        let entry = totals.entry(language.label()).or_default();
        entry.0 += 1;
        entry.1 += c.tokens_before;
        entry.2 += c.tokens_after;
    }
    println!("\ncompaction of examples/codebase (cl100k_base tokens)");
    println!("{:<10} {:>6} {:>8} {:>8} {:>7}", "language", "files", "before", "after", "saved");
    let (mut files, mut before, mut after) = (0, 0, 0);
    for (label, (n, b, a)) in &totals {
        println!("{label:<10} {n:>6} {b:>8} {a:>8} {:>6.1}%", 100.0 * (b - a) as f64 / *b as f64);
        files += n;
        before += b;
        after += a;
    }
    println!(
        "{:<10} {files:>6} {before:>8} {after:>8} {:>6.1}%",
        "total",
        100.0 * (before - after) as f64 / before as f64
    );
    let saved = |label: &str| {
        let (_, b, a) = totals[label];
        (b - a) as f64 / b as f64
    };
    // Real code carries comments and indentation; compaction must find them.
    assert!(saved("sql") > 0.25, "sql saved only {:.1}%", 100.0 * saved("sql"));
    assert!(saved("dotnet") > 0.15, "dotnet saved only {:.1}%", 100.0 * saved("dotnet"));
}

#[test]
fn literals_that_look_like_comments_survive() {
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let files: BTreeMap<String, String> = corpus().into_iter().collect();
    let compacted = |path: &str| {
        let text = &files[path];
        compact::compact(classify(text, Some(path)), text, Some(path), &counter).unwrap().text
    };
    let payments = compacted("src/Invoicing.Data/Repositories/PaymentRepository.cs");
    // The raw string literal is SQL with a `--` comment: it is the string's content, kept as is.
    assert!(payments.contains("              AND  p.Method <> 'REFUND' -- refunds are listed separately\n"));
    assert!(!payments.contains("Raw string literal: the SQL is pasted as-is"), "a C# comment survived");
    let repo = compacted("src/Invoicing.Data/Repositories/InvoiceRepository.cs");
    assert!(repo.contains(
        "@\"\nSELECT i.InvoiceId, i.InvoiceNumber, i.CustomerId, i.Status, i.CurrencyCode,\n       i.IssueDate"
    ));
    assert!(!repo.contains("#region") && !repo.contains("#endregion"));
    assert!(repo.contains("$\"Invoice {invoiceId} was issued without a number.\""));
    let statement = compacted("sql/views/vw_CustomerStatement.sql");
    assert!(statement.contains("ISNULL(p.Reference, N'[no reference]')"));
    let migration = compacted("sql/migrations/V002__add_line_discounts.sql");
    assert!(migration.contains("' draft line(s) received the customer''s default discount'"));
    assert!(migration.contains("\nGO"), "GO must stay on its own line");
    let view = compacted("src/Invoicing.Web/Views/Invoices/Details.cshtml");
    assert!(!view.contains("@*") && view.contains("<td class=\"num\">@line.Quantity.ToString(\"0.###\")</td>"));
    let csproj = compacted("src/Invoicing.Data/Invoicing.Data.csproj");
    assert!(!csproj.contains("<!--") && csproj.contains("<PackageReference Include=\"Dapper\" Version=\"2.1.35\" />"));
}
