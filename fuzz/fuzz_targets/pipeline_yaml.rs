//! A pipeline YAML file of any text: loading never panics, and a failure is at least one
//! located issue with a code and a message. Files the text names (`extends`, prompt `file`,
//! `config`) resolve against a directory that does not exist, so they are errors too; texts
//! naming device files are skipped (reading `/dev/stdin` would block the fuzzer).

#![no_main]

use ctx_runtime::pipeline::yaml::PipelineFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if text.contains("/dev/") || text.contains("/proc/") || text.contains("/sys/") {
        return;
    }
    match PipelineFile::parse(text, "/nonexistent-ctx-fuzz/pipeline.yaml") {
        Ok(file) => {
            let def = file.definition();
            assert!(!def.steps.is_empty(), "a valid pipeline has steps");
            assert!(file.locations().get(&Default::default()).is_some(), "the root is located");
        }
        Err(err) => {
            assert!(!err.issues().is_empty(), "an error has issues");
            for issue in err.issues() {
                assert!(!issue.code.as_str().is_empty() && !issue.message.is_empty(), "{issue}");
                assert!(issue.line > 0 || issue.column == 0, "{issue}");
            }
        }
    }
});
