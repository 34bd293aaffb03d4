use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::*;

/// Codes that no test produces, each with why. Keep it short: a code belongs here only when
/// producing it in a test would need something a test cannot reasonably arrange.
const UNTESTED: &[(Code, &str)] = &[
    // Both are "cannot happen" guards: the first needs a definition serde cannot serialize, the
    // second a pipeline that passes every check and still does not resolve.
    (Code::ContractFingerprintFailed, "serializing a definition cannot fail"),
    (Code::PipelineUnresolved, "a guard: a pipeline without issues always resolves"),
    // Needs crates of two ctx versions in one build.
    (Code::PipelineUnsupportedStep, "a step kind newer than the runtime"),
    // Only without the `hf` feature, and the tests run with every feature.
    (Code::ModelFilesNeedFeature, "a build without `hf`"),
    // Both read the process environment and a running llama.cpp server (scripts/llama-server.sh).
    (Code::LocalModelFileMissing, "the environment of a local server"),
    (Code::LocalModelWindowTooLarge, "a running local server"),
];

#[test]
fn every_code_has_a_unique_string_and_an_explanation() {
    let mut seen = BTreeSet::new();
    for &code in Code::ALL {
        assert!(seen.insert(code.as_str()), "{code} is written twice");
        assert_eq!(Code::parse(code.as_str()), Some(code));
        assert_eq!(code.as_str().parse::<Code>(), Ok(code));
        assert!(
            code.as_str().bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
            "{code} is not SCREAMING_SNAKE_CASE"
        );
        let explanation = code.explanation();
        assert!(!code.summary().trim().is_empty(), "{code} has no summary");
        assert!(explanation.lines().count() >= 2, "{code}: say what it means, then how to fix it");
        assert!(explanation.contains("Fix:"), "{code}: the explanation says how to fix it");
        assert!(!explanation.lines().any(|l| l.starts_with(' ')), "{code}: {explanation:?}");
    }
    assert_eq!(Code::parse("NO_SUCH_CODE"), None);
    assert_eq!("nope".parse::<Code>().unwrap_err().to_string(), "unknown error code `nope`");
}

#[test]
fn a_code_is_its_string_on_the_wire() {
    let code = Code::UnknownStepTarget;
    assert_eq!(code.to_string(), "UNKNOWN_STEP_TARGET");
    assert_eq!(serde_json::to_string(&code).unwrap(), "\"UNKNOWN_STEP_TARGET\"");
    assert_eq!(serde_json::from_str::<Code>("\"UNKNOWN_STEP_TARGET\"").unwrap(), code);
    assert!(serde_json::from_str::<Code>("\"UNKNOWN_STEP_TARGTE\"").is_err());
    assert_eq!(code, "UNKNOWN_STEP_TARGET");
    assert_eq!("UNKNOWN_STEP_TARGET", code);
    assert_eq!(code.area(), Area::Graph);
    assert_eq!(Code::YamlUnknownKey.area().name(), "yaml");
}

#[test]
fn relations_between_codes() {
    let graph: Vec<&str> = Code::ALL.iter().filter(|c| c.follows_from_graph()).map(|c| c.as_str()).collect();
    assert_eq!(graph, ["CUSTOM_WITHOUT_OUTCOMES", "UNREACHABLE_STEP", "END_UNREACHABLE", "UNGUARDED_CYCLE"]);
    assert!(Code::ALL.iter().filter(|c| c.follows_from_graph()).all(|c| c.area() == Area::Graph));
    assert_eq!(Code::EngineRatioSum.echo_of(), Some(Code::EngineRatioRange));
    assert_eq!(Code::EngineRatioRange.echo_of(), None);
}

/// The test sources of the workspace: test files whole, and of other source files what follows
/// their first `#[cfg(test)]`; every other file under a tests or cases folder (expected output,
/// `.stderr`) whole.
fn test_texts(root: &Path) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut texts = Vec::new();
    for dir in [
        "ctx-spec/src",
        "ctx-runtime/src",
        "ctx-macros/src",
        "ctx-tokens/src",
        "ctx-tokens/tests",
        "ctx-runtime/tests",
        "ctx-tests/tests",
        "ui-tests/cases",
        "ctx-cli/tests",
    ] {
        let mut files = Vec::new();
        walk(&root.join(dir), &mut files);
        for file in files {
            // The allow-list above names codes without producing them.
            if file.ends_with("ctx-spec/src/codes/tests.rs") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let in_src = dir.ends_with("/src");
            let test_file = name.ends_with("_tests.rs")
                || name == "tests.rs"
                || file.components().any(|c| c.as_os_str() == "tests" || c.as_os_str() == "snapshots");
            let text = if in_src && !test_file {
                if !name.ends_with(".rs") {
                    continue;
                }
                match text.find("#[cfg(test)]") {
                    Some(at) => text[at..].to_owned(),
                    None => continue,
                }
            } else {
                text
            };
            texts.push((file, text));
        }
    }
    texts
}

/// Whether `text` holds `word` with no identifier character on either side.
fn mentions(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(ident) && !text[at + word.len()..].chars().next().is_some_and(ident)
    })
}

#[test]
fn every_code_is_produced_by_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
    let texts = test_texts(root);
    assert!(texts.len() > 50, "the test sources were not found under {}", root.display());
    let untested: BTreeMap<Code, &str> = UNTESTED.iter().copied().collect();
    let mut missing = Vec::new();
    let mut stale = Vec::new();
    for &code in Code::ALL {
        let variant = format!("Code::{}", code.variant_name());
        let tested = texts.iter().any(|(_, t)| mentions(t, code.as_str()) || mentions(t, &variant));
        match (tested, untested.contains_key(&code)) {
            (false, false) => missing.push(code.as_str()),
            (true, true) => stale.push(code.as_str()),
            _ => {}
        }
    }
    assert!(missing.is_empty(), "no test produces these codes; add a case, or an entry to UNTESTED: {missing:?}");
    assert!(stale.is_empty(), "these codes are tested now; remove them from UNTESTED: {stale:?}");
}
