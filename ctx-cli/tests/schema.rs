//! `ctx schema` prints the JSON Schemas the repository keeps in `schema/`, where editors point
//! (ctx-spec's tests keep those files equal to the generated schemas).

use std::path::Path;
use std::process::Command;

fn schema(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ctx")).arg("schema").args(args).output().expect("the ctx binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn committed(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema").join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn schema_prints_the_committed_schemas() {
    assert_eq!(schema(&[]), committed("pipeline.schema.json"));
    assert_eq!(schema(&["pipeline"]), committed("pipeline.schema.json"));
    assert_eq!(schema(&["config"]), committed("config.schema.json"));
    let parsed: serde_json::Value = serde_json::from_str(&schema(&[])).expect("JSON");
    assert_eq!(parsed["$schema"], "http://json-schema.org/draft-07/schema#");
}
