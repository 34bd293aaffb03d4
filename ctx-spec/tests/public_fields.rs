//! Every public field of a `#[non_exhaustive]` struct of ctx-spec and ctx-runtime can be given
//! its value by a user: outside the crate such a struct cannot be written as a literal nor
//! updated with `..base`, so a field without a setter or a constructor argument can only be
//! assigned after construction, which reads as a defect of the API.
//!
//! The sources are read as text: each `#[non_exhaustive] pub struct` with named fields, each
//! `pub` field, and what can set it: a `pub fn` of an inherent `impl` named after the field (or
//! `with_FIELD`, `set_FIELD`), a `setters!` line naming it, a parameter of that name of such a
//! `pub fn` (a constructor argument), or a method listed in [`SET_BY`]. The structs ctx builds and
//! a user only reads (reports, outcomes, resolved values) are listed in [`READ_ONLY`]; a new
//! `#[non_exhaustive]` struct is in neither list until someone decides which it is, and this test
//! fails until then.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Structs ctx builds and hands out, whose fields a user reads: no setter by design.
const READ_ONLY: &[&str] = &[
    // ctx-runtime: what an MCP server listed, and a request's priced worst case.
    "McpTool",
    "WorstRequest",
    // ctx-spec: resolved configuration and the contract's results.
    "ConfigFile",
    "ConfigModel",
    "ModelFilesConfig",
    "CompactRule",
    "Clamp",
    "ContractReport",
    "StepBudget",
    "ContextTerm",
    "CostBound",
    "StepCost",
    "OutputLimit",
    "TemplateSyntaxError",
    "VarRef",
    "HeaviestRun",
    "RunBound",
    "SourceFile",
    // ctx-runtime: what a step, a run, a turn or an assembly did.
    "AppliedRule",
    "BudgetReport",
    "NodeTrace",
    "Compacted",
    "RunOutcome",
    "StepRecord",
    "ContextAssembly",
    "AssemblyReport",
    "PackReport",
    "ContextRetrieverRequest",
    "HistoryTrim",
    "HistoryTrimReport",
    "DroppedMessage",
    "Negotiated",
    "NegotiationMeta",
    "Answer",
    "StepOutcome",
    "StepReport",
    "StepModelRef",
    "AgentReport",
    "ModelRequestReport",
    "SentRequest",
    "ToolCallReport",
    "CallReport",
    "FetchReport",
    "SkippedNode",
    "TruncatedNode",
    "ToolRequest",
    "Chunk",
    "SkippedFile",
    "FallbackVerdict",
    "CallBudget",
    "LedgerBreakdown",
    "SeenDocument",
    "Packed",
    "PackedDocument",
    // ctx-runtime: a run's report and the price of a request, computed from the run.
    "RunReport",
    "StepEntry",
    "RequestEntry",
    "Change",
    "RequestCost",
    "PartCost",
    "Spend",
];

/// Fields set by a method not named after them: (struct, field, method).
const SET_BY: &[(&str, &str, &str)] = &[
    ("Usage", "cache_read_tokens", "with_cache"),
    ("Usage", "cache_write_tokens", "with_cache"),
    ("Usage", "reasoning_tokens", "with_reasoning"),
    ("AssemblyInput", "inputs", "input"),
    ("ChunkOptions", "kinds", "with_kind"),
    ("YamlIssue", "file", "new"),
    ("YamlIssue", "line", "new"),
    ("YamlIssue", "column", "new"),
];

/// The text of a Rust source with comments removed and every string and character literal
/// emptied, so that braces and `pub` inside them are not read as code.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('#') || next == Some('"')) && raw_string_start(&chars, i) {
            // A raw string: r"…", r#"…"#, br#"…"#, …
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|h| chars.get(j + h) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    _ => j += 1,
                }
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime.
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether the `r` at `i` opens a raw string: it starts a token, or follows the `b` or `c` that
/// does (`br"…"`, `cr"…"`).
fn raw_string_start(chars: &[char], i: usize) -> bool {
    let before = |n: usize| i.checked_sub(n).map(|p| chars[p]);
    !ident_char(before(1)) || (matches!(before(1), Some('b' | 'c')) && !ident_char(before(2)))
}

fn ident_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// The index just past the bracket closing the one at `open` (`{`, `(`, `[` or `<`).
fn close(text: &[u8], open: usize) -> usize {
    let (o, c) = match text[open] {
        b'{' => (b'{', b'}'),
        b'(' => (b'(', b')'),
        b'[' => (b'[', b']'),
        _ => (b'<', b'>'),
    };
    let mut depth = 0usize;
    for (i, &b) in text.iter().enumerate().skip(open) {
        if b == o {
            depth += 1;
        } else if b == c && !(c == b'>' && i > 0 && text[i - 1] == b'-') {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        }
    }
    text.len()
}

fn skip_space(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn ident_at(text: &str, i: usize) -> &str {
    let rest = &text[i..];
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    &rest[..end]
}

/// The names before a top-level `:` in a comma-separated list (fields, parameters).
fn names_before_colons(list: &str) -> Vec<String> {
    let bytes = list.as_bytes();
    let mut names = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'>' if i == 0 || bytes[i - 1] != b'-' => depth -= 1,
            b',' if depth == 0 => start = i + 1,
            b':' if depth == 0 && bytes.get(i + 1) != Some(&b':') && (i == 0 || bytes[i - 1] != b':') => {
                let head = list[start..i].trim();
                let name = head.rsplit(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
                names.push(name.to_owned());
                // Skip to the next top-level comma.
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    names
}

/// A `#[non_exhaustive]` struct with named fields.
struct Declared {
    file: PathBuf,
    fields: Vec<String>,
}

/// Everything read from the sources.
#[derive(Default)]
struct Sources {
    structs: BTreeMap<String, Vec<Declared>>,
    /// Struct name → names of the `pub fn`s of its inherent impls and of its `setters!` lines.
    methods: BTreeMap<String, BTreeSet<String>>,
    /// Struct name → parameter names of those `pub fn`s.
    parameters: BTreeMap<String, BTreeSet<String>>,
}

impl Sources {
    fn read(&mut self, file: &Path, source: &str) {
        let text = code_only(source);
        let bytes = text.as_bytes();
        for (at, _) in text.match_indices("#[non_exhaustive]") {
            let mut i = at + "#[non_exhaustive]".len();
            loop {
                i = skip_space(bytes, i);
                if bytes.get(i) == Some(&b'#') {
                    i = close(bytes, i + 1);
                } else {
                    break;
                }
            }
            let Some(rest) = text.get(i..) else { continue };
            let Some(after) = rest.strip_prefix("pub struct ") else { continue };
            let name = ident_at(after, 0).to_owned();
            let from = i + "pub struct ".len() + name.len();
            let Some(open) = text[from..].find(['{', '(', ';']).map(|o| from + o) else { continue };
            if bytes[open] != b'{' {
                continue;
            }
            let body = &text[open + 1..close(bytes, open) - 1];
            let fields = top_level_pub_fields(body);
            self.structs.entry(name).or_default().push(Declared { file: file.to_owned(), fields });
        }
        for (at, _) in text.match_indices("impl") {
            if ident_char(text[..at].chars().next_back()) || ident_char(text[at + 4..].chars().next()) {
                continue;
            }
            let mut i = skip_space(bytes, at + 4);
            if bytes.get(i) == Some(&b'<') {
                i = skip_space(bytes, close(bytes, i));
            }
            let name = ident_at(&text, i).to_owned();
            if name.is_empty() {
                continue;
            }
            i = skip_space(bytes, i + name.len());
            if bytes.get(i) == Some(&b'<') {
                i = skip_space(bytes, close(bytes, i));
            }
            if bytes.get(i) != Some(&b'{') {
                continue; // `impl Trait for Type`, or a path
            }
            let block = &text[i..close(bytes, i)];
            self.read_fns(&name, block);
        }
        for (at, _) in text.match_indices("setters!(") {
            let i = skip_space(bytes, at + "setters!(".len());
            let name = ident_at(&text, i).to_owned();
            let Some(open) = text[i..].find('{').map(|o| i + o) else { continue };
            let list = &text[open + 1..close(bytes, open) - 1];
            self.methods.entry(name).or_default().extend(names_before_colons(list));
        }
    }

    fn read_fns(&mut self, name: &str, block: &str) {
        let bytes = block.as_bytes();
        for (at, _) in block.match_indices("fn ") {
            let before = block[..at].trim_end();
            if !(before.ends_with("pub") || before.ends_with("pub const") || before.ends_with("pub async")) {
                continue;
            }
            let f = ident_at(block, at + 3).to_owned();
            let mut i = skip_space(bytes, at + 3 + f.len());
            if bytes.get(i) == Some(&b'<') {
                i = skip_space(bytes, close(bytes, i));
            }
            if bytes.get(i) == Some(&b'(') {
                let params = &block[i + 1..close(bytes, i) - 1];
                self.parameters.entry(name.to_owned()).or_default().extend(names_before_colons(params));
            }
            self.methods.entry(name.to_owned()).or_default().insert(f);
        }
    }
}

fn top_level_pub_fields(body: &str) -> Vec<String> {
    let bytes = body.as_bytes();
    let mut fields = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'p' if depth == 0 && body[i..].starts_with("pub ") && !ident_char(body[..i].chars().next_back()) => {
                let name = ident_at(body, skip_space(bytes, i + 4));
                let after = skip_space(bytes, i + 4 + name.len() + (skip_space(bytes, i + 4) - (i + 4)));
                if bytes.get(after) == Some(&b':') && !name.is_empty() {
                    fields.push(name.to_owned());
                }
            }
            _ => {}
        }
        i += 1;
    }
    fields
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("a source directory").flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn workspace_sources() -> Sources {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_owned();
    let mut sources = Sources::default();
    for krate in ["ctx-tokens/src", "ctx-spec/src", "ctx-runtime/src"] {
        let mut files = Vec::new();
        rust_files(&root.join(krate), &mut files);
        assert!(files.len() > 10, "{krate}: {} files", files.len());
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a readable source");
            sources.read(file.strip_prefix(&root).unwrap_or(&file), &text);
        }
    }
    sources
}

#[test]
fn every_public_field_of_a_non_exhaustive_struct_can_be_set() {
    let sources = workspace_sources();
    let empty = BTreeSet::new();
    let mut unset = Vec::new();
    for (name, declared) in &sources.structs {
        if READ_ONLY.contains(&name.as_str()) {
            continue;
        }
        let methods = sources.methods.get(name).unwrap_or(&empty);
        let parameters = sources.parameters.get(name).unwrap_or(&empty);
        for d in declared {
            for field in &d.fields {
                let by_name = [field.clone(), format!("with_{field}"), format!("set_{field}")];
                let set = by_name.iter().any(|m| methods.contains(m))
                    || parameters.contains(field)
                    || SET_BY.iter().any(|(s, f, m)| s == name && f == field && methods.contains(*m));
                if !set {
                    unset.push(format!("{}: {name}::{field}", d.file.display()));
                }
            }
        }
    }
    assert!(
        unset.is_empty(),
        "public fields of #[non_exhaustive] structs with no setter and no constructor argument (add one, or list \
         the struct in READ_ONLY when ctx alone builds it):\n{}",
        unset.join("\n")
    );
}

#[test]
fn the_lists_name_structs_that_exist() {
    let sources = workspace_sources();
    // The scan finds what it must: structs of both crates, and the setters of a known one.
    assert!(sources.structs.len() > 60, "{} structs", sources.structs.len());
    let request = &sources.structs["NegotiationRequest"][0];
    assert!(request.fields.iter().any(|f| f == "requested_max_tokens"), "{:?}", request.fields);
    assert!(sources.methods["NegotiationRequest"].contains("history"));
    for name in READ_ONLY {
        assert!(sources.structs.contains_key(*name), "READ_ONLY names {name}, which is no #[non_exhaustive] struct");
    }
    for (name, field, method) in SET_BY {
        let declared = sources.structs.get(*name).unwrap_or_else(|| panic!("SET_BY names {name}"));
        assert!(declared.iter().any(|d| d.fields.iter().any(|f| f == field)), "{name} has no field {field}");
        assert!(sources.methods.get(*name).is_some_and(|m| m.contains(*method)), "{name} has no method {method}");
    }
}

#[test]
fn the_reader_skips_comments_and_literals() {
    let text = code_only(
        "let a = '{'; // { pub x: u8\nlet b = \"}\"; /* { */ let c: &'static str = r#\"{\"#; let d = br#\"{\"}\"#;",
    );
    assert_eq!(text.matches('{').count(), 0, "{text}");
    assert!(text.contains("&'static str"));
    let mut s = Sources::default();
    s.read(
        Path::new("x.rs"),
        "#[derive(Debug)]\n#[non_exhaustive]\n#[serde(rename_all = \"snake_case\")]\npub struct A<'a> {\n    /// A {.\n    pub x: Option<Vec<u8>>,\n    pub(crate) y: u8,\n    #[serde(default)]\n    pub z: fn(u8) -> u8,\n}\nimpl<'a> A<'a> {\n    pub fn new(x: Option<Vec<u8>>) -> Self { todo!() }\n    fn hidden(&self) {}\n    pub fn z(self, f: fn(u8) -> u8) -> Self { self }\n}\nimpl Default for A<'_> { fn default() -> Self { todo!() } }\n",
    );
    assert_eq!(s.structs["A"][0].fields, ["x", "z"]);
    assert_eq!(s.methods["A"], BTreeSet::from(["new".to_owned(), "z".to_owned()]));
    assert!(s.parameters["A"].contains("x") && s.parameters["A"].contains("f"));
}
