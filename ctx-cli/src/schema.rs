//! `ctx schema`: the JSON Schema of pipeline files (or of `config.json`) that editors validate
//! YAML against, generated from the decoder's own tables, so it accepts the keys and shapes
//! `ctx check` reads. The repository keeps the same text in `schema/`, for editors to point at.

use std::process::ExitCode;

use clap::ValueEnum;
use ctx::pipeline::yaml::{config_json_schema, json_schema};

/// Which file's schema.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchemaOf {
    /// A pipeline file (`*.yaml`).
    Pipeline,
    /// The `config.json` a pipeline names with `config:`.
    Config,
}

/// Prints the schema as pretty JSON, the text of the committed `schema/*.schema.json`.
pub(crate) fn print(of: SchemaOf) -> Result<ExitCode, String> {
    let schema = match of {
        SchemaOf::Pipeline => json_schema(),
        SchemaOf::Config => config_json_schema(),
    };
    let text = serde_json::to_string_pretty(&schema).map_err(|e| format!("cannot write the schema: {e}"))?;
    outln!("{text}");
    Ok(ExitCode::SUCCESS)
}
