//! `config.json` files: what is read, and errors that name the file and the key.

use std::path::PathBuf;

use ctx_runtime::config::{ConfigFile, ConfigFileError, ModelConfig};
use ctx_runtime::{CtxError, Encoding, ErrorCode};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/config").join(name)
}

/// `(code, key)` of every issue of an `Invalid` error, after checking that the message names
/// the file and each key.
fn problems(name: &str) -> Vec<(&'static str, String)> {
    let path = fixture(name);
    let err = ModelConfig::from_json_file(&path).unwrap_err();
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "the file is not named: {text}");
    let ConfigFileError::Invalid { path: reported, issues } = &err else { panic!("{err:?}") };
    // One code names the error when all its issues share it; else `CONFIG_FILE_INVALID`.
    let mixed = issues.iter().any(|i| i.code != issues[0].code);
    assert_eq!(err.code(), if mixed { "CONFIG_FILE_INVALID" } else { issues[0].code.as_str() });
    assert_eq!(reported, &path);
    for issue in issues {
        assert!(text.contains(&format!("`{}`", issue.path)), "key {} not named: {text}", issue.path);
    }
    issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect()
}

#[test]
fn a_valid_file_gives_the_model_config() {
    let model = ModelConfig::from_json_file(fixture("valid.json")).unwrap();
    assert_eq!(
        model,
        ModelConfig::new(16_384, Encoding::O200kBase).model(Some("gpt-4o".into())).max_tokens(Some(1_024))
    );
    assert!(!ConfigFile::load(fixture("valid.json")).unwrap().allow_auto_clamp);
}

#[test]
fn a_local_model_needs_its_encoding_written_and_may_opt_in() {
    let file = ConfigFile::load(fixture("local_model.json")).unwrap();
    assert_eq!((file.model.context_window, file.model.encoding), (9_600, Encoding::Cl100kBase));
    assert!(file.allow_auto_clamp);
    assert_eq!(problems("unknown_model.json"), [("UNKNOWN_MODEL", "model".to_owned())]);
}

#[test]
fn the_window_is_required_even_for_a_known_model() {
    assert_eq!(problems("missing_window.json"), [("MISSING_CONTEXT_WINDOW", "model_context_window".to_owned())]);
}

#[test]
fn unknown_keys_are_reported_with_a_suggestion() {
    let path = fixture("unknown_key.json");
    assert_eq!(problems("unknown_key.json"), [("UNKNOWN_CONFIG_KEY", "model_max_token".to_owned())]);
    let text = ModelConfig::from_json_file(&path).unwrap_err().to_string();
    assert!(text.contains("did you mean `model_max_tokens`?"), "{text}");
}

#[test]
fn every_invalid_value_is_reported_under_its_key() {
    assert_eq!(
        problems("invalid_values.json"),
        [
            ("INVALID_CONTEXT_WINDOW", "model_context_window".to_owned()),
            ("UNKNOWN_ENCODING", "encoding".to_owned()),
            ("INVALID_MAX_TOKENS", "model_max_tokens".to_owned()),
            ("INVALID_CONFIG_VALUE", "allow_auto_clamp".to_owned()),
        ]
    );
}

#[test]
fn unreadable_and_malformed_files_name_the_file() {
    let missing = fixture("does_not_exist.json");
    let err = ModelConfig::from_json_file(&missing).unwrap_err();
    assert!(matches!(err, ConfigFileError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("does_not_exist.json"), "{err}");
    assert_eq!(err.code(), "CONFIG_FILE_UNREADABLE");

    let err = ModelConfig::from_json_file(fixture("broken.json")).unwrap_err();
    assert!(matches!(err, ConfigFileError::Syntax { line: 2, .. }), "{err:?}");
    assert_eq!(err.code(), "CONFIG_FILE_SYNTAX");
    assert!(err.to_string().contains("broken.json"), "{err}");

    let err = ModelConfig::from_json_file(fixture("array.json")).unwrap_err();
    assert!(matches!(err, ConfigFileError::NotAnObject { found: "array", .. }), "{err:?}");

    // One error type for a run: the code survives the conversion.
    let err: CtxError = ModelConfig::from_json_file(fixture("missing_window.json")).unwrap_err().into();
    assert_eq!(err.code(), "MISSING_CONTEXT_WINDOW");
    assert!(err.to_string().contains("missing_window.json"), "{err}");
}
