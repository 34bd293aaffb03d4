//! `config.json` loading on any bytes: a typed error naming the file, or a config whose limits
//! are usable; never a panic.

#![no_main]

use ctx_runtime::ErrorCode;
use ctx_runtime::config::ConfigFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    match ConfigFile::from_json_str(text, "deploy/config.json") {
        Ok(config) => {
            assert!(config.model.context_window > 0, "a loaded config has a window");
            if let Some(max) = config.model.max_tokens {
                assert!(max > 0, "a loaded output limit is positive");
            }
            // What loads re-serializes to a file that loads to the same config.
            let mut object = serde_json::Map::new();
            if let Some(model) = &config.model.model {
                object.insert("model".into(), model.clone().into());
            }
            object.insert("model_context_window".into(), config.model.context_window.into());
            if let Some(max) = config.model.max_tokens {
                object.insert("model_max_tokens".into(), max.into());
            }
            object.insert("encoding".into(), config.model.encoding.name().into());
            object.insert("allow_auto_clamp".into(), config.allow_auto_clamp.into());
            let again = ConfigFile::from_json_str(&serde_json::Value::Object(object).to_string(), "again.json")
                .expect("a loaded config re-serializes to a valid file");
            assert_eq!(again, config);
        }
        Err(error) => {
            let message = error.to_string();
            assert!(message.contains("deploy/config.json"), "error does not name the file: {message}");
            assert!(!error.code().as_str().is_empty());
        }
    }
});
