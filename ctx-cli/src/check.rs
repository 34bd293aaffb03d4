//! `ctx check`: every pipeline file under the paths given, loaded with all of ctx's rules; each
//! problem and warning at its file, line and column (text or JSON).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use annotate_snippets::Level;
use ctx::pipeline::yaml::{LoadedFile, PipelineFile, YamlIssue};

use crate::io::{Format, validate_options};
use crate::render::{render, render_as};
use crate::runnable;

pub(crate) fn check(paths: &[PathBuf], format: Format) -> Result<ExitCode, String> {
    let mut files = Vec::new();
    for path in paths {
        collect(path, &mut files)?;
    }
    if files.is_empty() {
        return Err("no `*.yaml` or `*.yml` file found".into());
    }
    let opts = validate_options();
    let results: Vec<(PathBuf, Result<LoadedFile, Vec<YamlIssue>>)> = files
        .into_iter()
        .map(|f| {
            let result = PipelineFile::load_with(&f, &opts).map_err(|e| e.issues().to_vec());
            (f, result)
        })
        .collect();
    // A file that another one extends is checked through it.
    let bases: BTreeSet<PathBuf> = results
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok())
        .flat_map(|loaded| loaded.files().iter().skip(1).filter_map(|f| f.canonicalize().ok()))
        .collect();
    let mut issues = Vec::new();
    // What may fail a run of a file that passes (a variable read where some path has not set
    // it), and what `auto_clamp` lowers: the specification says every clamp is a warning with the
    // values before and after and the reason, so a check shows each one.
    let mut warnings = Vec::new();
    let mut checked = 0;
    for (file, result) in results {
        if file.canonicalize().is_ok_and(|c| bases.contains(&c)) {
            continue;
        }
        checked += 1;
        match result {
            Ok(loaded) => {
                warnings.extend(loaded.warnings());
                warnings.extend(loaded.clamps().iter().map(|c| loaded.clamp_warning(c)));
                // Valid for a Rust caller, but `ctx run` has no backend for some step.
                warnings.extend(runnable::unrunnable_steps(&loaded));
            }
            Err(found) => issues.extend(found),
        }
    }
    match format {
        Format::Text => {
            render(&issues);
            render_as(&warnings, Level::WARNING);
            let files_word = if checked == 1 { "file" } else { "files" };
            let warned = match warnings.len() {
                0 => String::new(),
                n => format!(", {n} warning(s)"),
            };
            if issues.is_empty() {
                outln!("{checked} pipeline {files_word} checked: no problem{warned}");
            } else {
                outln!("{checked} pipeline {files_word} checked: {} problem(s){warned}", issues.len());
            }
        }
        Format::Json => {
            let entry = |i: &YamlIssue, level: &str| {
                serde_json::json!({
                    "file": i.file.display().to_string(), "line": i.line, "column": i.column, "level": level,
                    "code": i.code, "message": i.message, "help": i.help,
                })
            };
            let json: Vec<serde_json::Value> =
                issues.iter().map(|i| entry(i, "error")).chain(warnings.iter().map(|w| entry(w, "warning"))).collect();
            outln!("{}", serde_json::Value::Array(json));
        }
    }
    Ok(if issues.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `path` itself, or the YAML files below it, sorted.
fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if path.is_file() {
        out.push(path.to_owned());
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let mut found: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    found.sort();
    for entry in found {
        if entry.is_dir() {
            collect(&entry, out)?;
        } else if entry.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(entry);
        }
    }
    Ok(())
}
