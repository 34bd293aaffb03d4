//! Reading a crate's module tree and its imports from the sources, without compiling them: the
//! files (`mod name;` from `lib.rs`/`main.rs` down), the `use` trees and the `crate::`, `super::`,
//! `self::` and child-module paths of each file, and where each path leads once re-exports are
//! followed. Comments, string literals and `#[cfg(test)]` items are left out first: a test module
//! imports what it tests, which is no dependency of the code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module by its path inside the crate: `[]` is the root, `["pipeline", "steps"]` is
/// `pipeline::steps`.
pub type ModPath = Vec<String>;

/// The module path as written in the floor lists (`lib` for the root).
pub fn name(path: &[String]) -> String {
    if path.is_empty() { "lib".to_owned() } else { path.join("::") }
}

/// One name a `use` binds: the path it stands for and the name it is bound to (`*` for a glob).
#[derive(Debug, Clone)]
struct Binding {
    path: Vec<String>,
    name: String,
}

/// One file module: its code without comments, strings and tests, its `use` bindings and the
/// child modules it declares.
#[derive(Debug)]
struct FileModule {
    code: String,
    bindings: Vec<Binding>,
    children: BTreeSet<String>,
}

/// A crate's file modules and the imports between them.
#[derive(Debug)]
pub struct Crate {
    modules: BTreeMap<ModPath, FileModule>,
    /// `from → to`: `from` names something defined in `to`.
    pub edges: BTreeMap<ModPath, BTreeSet<ModPath>>,
}

impl Crate {
    /// Reads the crate whose sources are in `src` (its `lib.rs`, or `main.rs` for a binary).
    pub fn read(src: &Path) -> Crate {
        let root = if src.join("lib.rs").is_file() { src.join("lib.rs") } else { src.join("main.rs") };
        let mut modules = BTreeMap::new();
        walk(&root, Vec::new(), &mut modules);
        let mut krate = Crate { modules, edges: BTreeMap::new() };
        let mut edges = BTreeMap::new();
        for (module, file) in &krate.modules {
            let mut targets = BTreeSet::new();
            let mut paths: Vec<Vec<String>> = file.bindings.iter().map(|b| b.path.clone()).collect();
            paths.extend(qualified_paths(&file.code, &file.children));
            for path in paths {
                if let Some(target) = krate.resolve(module, &path, 0)
                    && &target != module
                {
                    targets.insert(target);
                }
            }
            edges.insert(module.clone(), targets);
        }
        krate.edges = edges;
        krate
    }

    /// Every file module of the crate.
    pub fn modules(&self) -> impl Iterator<Item = &ModPath> {
        self.modules.keys()
    }

    /// The file module `path` (as written in `module`) leads to: the deepest module it names, or,
    /// when it names an item that module only imports, the module that item comes from. `None`
    /// for a path outside the crate (another crate, the standard library, a local item).
    fn resolve(&self, module: &ModPath, path: &[String], depth: usize) -> Option<ModPath> {
        let absolute = self.absolute(module, path)?;
        let mut known = absolute.len();
        while known > 0 && !self.modules.contains_key(&absolute[..known]) {
            known -= 1;
        }
        let target: ModPath = absolute[..known].to_vec();
        let rest = &absolute[known..];
        let Some(item) = rest.first() else { return Some(target) };
        let file = &self.modules[&target];
        // A re-export (or a plain import a child reaches with `super::`): follow it, so an item
        // counts as coming from where it is defined, not from the module that lists it.
        if depth < 16 && !defines(&file.code, item) {
            if let Some(binding) = file.bindings.iter().find(|b| &b.name == item) {
                return self.resolve(&target, &binding.path, depth + 1);
            }
            for glob in file.bindings.iter().filter(|b| b.name == "*") {
                if let Some(source) = self.resolve(&target, &glob.path, depth + 1)
                    && self
                        .modules
                        .get(&source)
                        .is_some_and(|m| defines(&m.code, item) || m.bindings.iter().any(|b| &b.name == item))
                {
                    let mut through = glob.path.clone();
                    through.push(item.clone());
                    return self.resolve(&target, &through, depth + 1);
                }
            }
        }
        Some(target)
    }

    /// `path` as written in `module`, from the crate root; `None` when it starts outside the crate.
    fn absolute(&self, module: &ModPath, path: &[String]) -> Option<Vec<String>> {
        let first = path.first()?;
        match first.as_str() {
            "crate" => Some(path[1..].to_vec()),
            "self" => Some(module.iter().chain(&path[1..]).cloned().collect()),
            "super" => {
                let mut base = module.clone();
                let mut i = 0;
                while path.get(i).is_some_and(|s| s == "super") {
                    base.pop()?;
                    i += 1;
                }
                Some(base.into_iter().chain(path[i..].iter().cloned()).collect())
            }
            child if self.modules[module].children.contains(child) => {
                Some(module.iter().chain(path).cloned().collect())
            }
            _ => None,
        }
    }
}

/// Reads `file` as module `path` and, from its `mod name;` declarations, its children.
fn walk(file: &Path, path: ModPath, modules: &mut BTreeMap<ModPath, FileModule>) {
    let source = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let code = drop_test_items(&strip(&source));
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let dir = file.parent().unwrap_or(Path::new("."));
    let dir: PathBuf = if matches!(stem, "lib" | "main" | "mod") { dir.to_path_buf() } else { dir.join(stem) };
    let children = declared_modules(&code);
    let bindings = use_bindings(&code);
    let paths = path_attributes(&source);
    for child in &children {
        // `#[path = "…"]` is relative to the directory of the declaring file.
        let child_file = match paths.get(child) {
            Some(at) => file.parent().unwrap_or(Path::new(".")).join(at),
            None => {
                let flat = dir.join(format!("{child}.rs"));
                if flat.is_file() { flat } else { dir.join(child).join("mod.rs") }
            }
        };
        assert!(child_file.is_file(), "{}: `mod {child};` has no file", file.display());
        let mut child_path = path.clone();
        child_path.push(child.clone());
        walk(&child_file, child_path, modules);
    }
    modules.insert(path, FileModule { code, bindings, children });
}

/// `source` without comments, and with every string, raw string and character literal emptied,
/// so that nothing inside them reads as code.
pub fn strip(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < b.len() {
        let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if !prev_ident && let Some(len) = raw_string_len(&b[i..]) {
            out.push_str("\"\"");
            i += len;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\''
            && let Some(len) = char_literal_len(&b[i..])
        {
            out.push_str("' '");
            i += len;
        } else {
            let ch = source[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The length of a raw (byte) string literal starting at `b[0]`, if one does.
fn raw_string_len(b: &[u8]) -> Option<usize> {
    let mut i = usize::from(b.first() == Some(&b'b'));
    if b.get(i) != Some(&b'r') {
        return None;
    }
    i += 1;
    let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
    i += hashes;
    if b.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    while i < b.len() {
        if b[i] == b'"' && b[i + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(b.len())
}

/// The length of a character literal starting at `b[0]` (`'a'`, `'\n'`, `'\u{1F600}'`, `'é'`), or
/// `None` for a lifetime.
fn char_literal_len(b: &[u8]) -> Option<usize> {
    if b.get(1) == Some(&b'\\') {
        let close = b.iter().skip(2).position(|&c| c == b'\'')?;
        return (close < 10).then_some(close + 3);
    }
    let text = std::str::from_utf8(&b[1..b.len().min(6)])
        .ok()
        .or_else(|| (1..b.len().min(6)).rev().find_map(|end| std::str::from_utf8(&b[1..end]).ok()))?;
    let ch = text.chars().next()?;
    (b.get(1 + ch.len_utf8()) == Some(&b'\'')).then_some(ch.len_utf8() + 2)
}

/// `code` without the items marked `#[cfg(test)]` (test modules, inline or in files, and test-only
/// imports or helpers).
pub fn drop_test_items(code: &str) -> String {
    let mut code = code.to_owned();
    while let Some(start) = code.find("#[cfg(test)]") {
        let end = item_end(&code, start + "#[cfg(test)]".len());
        code.replace_range(start..end, "");
    }
    code
}

/// Where the item that starts at `from` (after its first attribute) ends: after its `;`, or after
/// the `}` closing its first `{`, whichever comes first.
fn item_end(code: &str, from: usize) -> usize {
    let b = code.as_bytes();
    let mut i = from;
    let mut brackets = 0usize;
    while i < b.len() {
        match b[i] {
            b'[' | b'(' => brackets += 1,
            b']' | b')' => brackets = brackets.saturating_sub(1),
            b';' if brackets == 0 => return i + 1,
            b'{' if brackets == 0 => {
                let mut depth = 0usize;
                while i < b.len() {
                    match b[i] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                return i + 1;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                return b.len();
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Whether `c` can be part of an identifier.
fn ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The positions where `word` occurs in `code` as a whole word.
fn word_at(code: &str, word: &str) -> Vec<usize> {
    let b = code.as_bytes();
    code.match_indices(word)
        .map(|(i, _)| i)
        .filter(|&i| (i == 0 || !ident_char(b[i - 1])) && b.get(i + word.len()).is_none_or(|&c| !ident_char(c)))
        .collect()
}

/// The identifier at the start of `s` (after spaces), if any.
fn ident(s: &str) -> Option<&str> {
    let s = s.trim_start();
    let s = s.strip_prefix("r#").unwrap_or(s);
    let len = s.bytes().take_while(|&c| ident_char(c)).count();
    (len > 0).then(|| &s[..len])
}

/// The child modules `code` declares in files (`mod name;`).
fn declared_modules(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for at in word_at(code, "mod") {
        let rest = &code[at + 3..];
        let Some(name) = ident(rest) else { continue };
        let after = rest.trim_start()[name.len()..].trim_start();
        if after.starts_with(';') {
            names.insert(name.to_owned());
        }
    }
    names
}

/// The `#[path = "…"]` of each module declared with one in `source` (read before strings are
/// emptied): the module's name and the path as written.
fn path_attributes(source: &str) -> BTreeMap<String, String> {
    let mut paths = BTreeMap::new();
    for (at, _) in source.match_indices("#[path = \"") {
        let start = at + "#[path = \"".len();
        let Some(len) = source[start..].find('"') else { continue };
        let mut rest = source[start + len..].trim_start_matches(['"', ']']).trim_start();
        // Other attributes and a visibility may stand between the attribute and `mod`.
        while rest.starts_with("#[") {
            rest = rest[rest.find(']').map_or(rest.len(), |i| i + 1)..].trim_start();
        }
        if let Some(after_pub) = rest.strip_prefix("pub") {
            rest = after_pub.trim_start();
            if rest.starts_with('(') {
                rest = rest[rest.find(')').map_or(rest.len(), |i| i + 1)..].trim_start();
            }
        }
        if let Some(name) = rest.strip_prefix("mod ").and_then(ident) {
            paths.insert(name.to_owned(), source[start..start + len].to_owned());
        }
    }
    paths
}

/// Whether `code` defines an item called `name` (a function, type, trait, constant, static,
/// module or macro).
fn defines(code: &str, name: &str) -> bool {
    const KINDS: [&str; 10] =
        ["fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod", "macro_rules!"];
    word_at(code, name).into_iter().any(|at| {
        let before = code[..at].trim_end();
        KINDS.iter().any(|kind| {
            before.ends_with(kind) && {
                let start = before.len() - kind.len();
                start == 0 || !ident_char(before.as_bytes()[start - 1])
            }
        })
    })
}

/// Every name the `use` declarations of `code` bind, with the path each stands for.
fn use_bindings(code: &str) -> Vec<Binding> {
    let mut out = Vec::new();
    for at in word_at(code, "use") {
        let Some(end) = code[at..].find(';') else { continue };
        let tree: String = code[at + 3..at + end].split_whitespace().collect::<Vec<_>>().join(" ");
        expand_tree(&[], &tree, &mut out);
    }
    out
}

/// Expands one use tree (`a::{b, c::D as E, f::*}`) under `prefix`.
fn expand_tree(prefix: &[String], tree: &str, out: &mut Vec<Binding>) {
    let tree = tree.trim();
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        for part in split_top_level(inner) {
            expand_tree(prefix, part, out);
        }
        return;
    }
    if let Some(brace) = tree.find('{') {
        let mut head = prefix.to_vec();
        head.extend(segments(&tree[..brace]));
        expand_tree(&head, &tree[brace..], out);
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((path, alias)) => (path, Some(alias.trim())),
        None => (tree, None),
    };
    let mut full = prefix.to_vec();
    full.extend(segments(path));
    if full.last().is_some_and(|s| s == "self") {
        full.pop();
    }
    let Some(last) = full.last().cloned() else { return };
    if last == "*" {
        full.pop();
    }
    out.push(Binding { path: full, name: alias.map_or(last, str::to_owned) });
}

/// The `::`-separated segments of a path, without a leading `::`.
fn segments(path: &str) -> Vec<String> {
    path.split("::").map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// `s` split at the commas outside braces.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// The paths in `code` that start with `crate`, `super`, `self` or a child module, as far as they
/// name modules or items (`crate::tokens::TokenCounter::count` → all four segments); macro
/// invocations (`crate::setters!`) are not imports.
fn qualified_paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts_word = (i == 0 || !(ident_char(b[i - 1]) || b[i - 1] == b':')) && ident_char(b[i]);
        if !starts_word {
            i += 1;
            continue;
        }
        let Some(first) = ident(&code[i..]) else {
            i += 1;
            continue;
        };
        let relative = matches!(first, "crate" | "super" | "self") || children.contains(first);
        let mut end = i + first.len();
        let mut path = vec![first.to_owned()];
        while code[end..].starts_with("::") {
            let Some(next) = ident(&code[end + 2..]).filter(|n| code[end + 2..].starts_with(n)) else { break };
            path.push(next.to_owned());
            end += 2 + next.len();
        }
        let is_macro = code[end..].trim_start().starts_with('!');
        // `a::{b, c}` and `a::*` are use trees, read whole by `use_bindings`; their head alone
        // names no item.
        let tree_head = code[end..].starts_with("::");
        if relative && path.len() > 1 && !is_macro && !tree_head {
            out.push(path);
        }
        i = end;
    }
    out
}
