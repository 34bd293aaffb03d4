//! The fingerprint cache of `budget_contract.md`: a pipeline file is read and its contract
//! checked again only when the pipeline file, an `extends` file, a prompt file or the
//! `config.json` changed — and loading a checked file for running does not count its prompts a
//! second time.
//!
//! One test in this binary: it reads the process-wide contract cache's counters, which another
//! test running in parallel would move.

use std::path::Path;
use std::sync::Arc;

use ctx_runtime::contract::{ContractCache, ContractCacheStats};
use ctx_runtime::pipeline::yaml::PipelineCache;
use ctx_runtime::pipeline::{LoadOptions, LoadedPipeline};

const BASE: &str = "config: config.json
settings:
  max_context_tokens: 5000
prompts:
  answer: { file: prompts/answer.txt }
steps:
  - id: answer
    action: call_model
    prompt_key: answer
    max_output_tokens: 800
    next: end
";

const QA: &str = "name: Qa
extends: base.yaml
settings:
  max_history_tokens: 1000
";

const CONFIG: &str = r#"{ "model": "gpt-4o", "model_context_window": 9600, "model_max_tokens": 800 }"#;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// (misses, hits) of the file cache.
fn counts(cache: &PipelineCache) -> (u64, u64) {
    let ContractCacheStats { misses, hits } = cache.stats();
    (misses, hits)
}

#[test]
fn files_are_checked_again_only_when_one_of_them_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("prompts")).unwrap();
    write(d, "base.yaml", BASE);
    write(d, "qa.yaml", QA);
    write(d, "config.json", CONFIG);
    write(d, "prompts/answer.txt", "Answer from the context.");
    let qa = d.join("qa.yaml");
    let cache = PipelineCache::default();

    let first = cache.load(&qa).unwrap();
    let names: Vec<_> = first.sources().iter().map(|s| s.path.file_name().unwrap().to_owned()).collect();
    assert_eq!(names, ["qa.yaml", "base.yaml", "answer.txt", "config.json"]);
    assert!(first.sources().iter().all(|s| s.is_current()));
    assert_eq!(counts(&cache), (1, 0));

    // Unchanged, or rewritten with the same bytes: answered from the cache.
    assert!(Arc::ptr_eq(&first, &cache.load(&qa).unwrap()));
    write(d, "base.yaml", BASE);
    assert!(Arc::ptr_eq(&first, &cache.load(&qa).unwrap()));
    assert_eq!(counts(&cache), (1, 2));

    // Each kind of file, changed, is read and checked again.
    write(d, "prompts/answer.txt", "Answer from the context, briefly.");
    let edited = cache.load(&qa).unwrap();
    assert_eq!(edited.definition().prompts[0].text.as_deref(), Some("Answer from the context, briefly."));
    assert_eq!(counts(&cache), (2, 2));

    write(d, "base.yaml", &BASE.replace("max_output_tokens: 800", "max_output_tokens: 700"));
    assert!(cache.load(&qa).is_ok());
    assert_eq!(counts(&cache), (3, 2));

    write(d, "qa.yaml", &QA.replace("1000", "1200"));
    assert!(cache.load(&qa).is_ok());
    assert_eq!(counts(&cache), (4, 2));

    // A window too small for the contract: the change is seen, and the failure is cached too.
    write(d, "config.json", &CONFIG.replace("9600", "4000"));
    let err = cache.load(&qa).unwrap_err();
    let issue = &err.issues()[0];
    assert_eq!(
        (issue.code.as_str(), issue.file.file_name().unwrap().to_str()),
        ("BUDGET_CONTRACT_VIOLATED", Some("base.yaml"))
    );
    assert_eq!(cache.load(&qa).unwrap_err(), err);
    assert_eq!(counts(&cache), (5, 3));

    // Every file back as at the start: the first outcome, not a new check.
    write(d, "config.json", CONFIG);
    write(d, "qa.yaml", QA);
    write(d, "base.yaml", BASE);
    write(d, "prompts/answer.txt", "Answer from the context.");
    assert!(Arc::ptr_eq(&first, &cache.load(&qa).unwrap()));
    assert_eq!(counts(&cache), (5, 4));

    // Loading the checked file for running finds its contract in the process-wide cache.
    let before = ContractCache::shared().stats();
    let loaded = LoadedPipeline::load_file(&first, LoadOptions::new()).unwrap();
    let after = ContractCache::shared().stats();
    assert_eq!((after.misses - before.misses, after.hits - before.hits), (0, 1));
    assert_eq!(loaded.contract_report().context_window, 9600);
}
