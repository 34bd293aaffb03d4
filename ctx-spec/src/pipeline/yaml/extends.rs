//! Reading a pipeline file and its `extends` chain into one merged YAML tree.
//!
//! The merge works on located nodes, so a value inherited from a base file keeps the base
//! file's location. Rules (the file's own values win):
//!
//! * `extends: base.yaml` or `extends: [a.yaml, b.yaml]`, relative to the file that writes it;
//!   several bases are merged left to right (a later base wins over an earlier one), then the
//!   file itself on top.
//! * `settings`, `prompts` and `models` are merged key by key: the base's keys in their order, the file's
//!   value replacing the base's for a key both write, the file's new keys appended.
//! * `steps` are merged by `id`: the base's steps in their order, a step of the file with the
//!   id of a base step replacing it in place, the file's other steps appended in the file's
//!   order. The first step (where a run starts) is therefore the base's first step unless the
//!   file replaces it.
//! * Every other key (`name`, `model`, `config`) is taken whole from the file when it writes
//!   it, else from the base.
//! * A file reached twice along one chain is a cycle (`a.yaml → b.yaml → a.yaml`); a file that
//!   cannot be read is an error naming the chain that led to it.

use std::path::{Path, PathBuf};

use super::document::relative_to;
use super::error::{Location, YamlIssue};
use super::node::{Node, Value, parse};
use super::sources::Sources;

use crate::codes::Code;

/// The most files one `extends` chain may hold.
pub(crate) const MAX_CHAIN: usize = 32;

/// Reads files and collects what went wrong.
pub(crate) struct Chain {
    /// Every file read, in the order read.
    pub sources: Sources,
    pub issues: Vec<YamlIssue>,
    /// The directory chains are shown relative to.
    top_dir: PathBuf,
}

impl Chain {
    pub(crate) fn new(top: &Path) -> Self {
        Chain {
            sources: Sources::default(),
            issues: Vec::new(),
            top_dir: top.parent().map(Path::to_owned).unwrap_or_default(),
        }
    }

    /// The merged tree of `path` with text `text` (already read), or `None` after an issue.
    pub(crate) fn load_text(&mut self, path: &Path, text: &str) -> Option<Node> {
        let mut stack = vec![identity(path)];
        self.sources.record(path, text);
        self.resolve(path, text, &mut stack)
    }

    fn resolve(&mut self, path: &Path, text: &str, stack: &mut Vec<PathBuf>) -> Option<Node> {
        let root = match parse(text, path) {
            Ok(root) => root,
            Err(issue) => {
                self.issues.push(issue);
                return None;
            }
        };
        let Some(extends) = root.get("extends") else { return Some(root) };
        let names: Vec<&Node> = match (&extends.value, extends.as_text()) {
            (_, Some(_)) => vec![extends],
            (Value::Seq(items), _) => items.iter().collect(),
            _ => {
                self.issues.push(
                    YamlIssue::new(
                        &extends.at,
                        Code::YamlWrongType,
                        format!("`extends` must be a file name or a list of file names, found {}", extends.describe()),
                    )
                    .with_help("write `extends: base.yaml`"),
                );
                return None;
            }
        };
        let mut base: Option<Node> = None;
        let mut ok = true;
        for name in names {
            let Some(rel) = name.as_text() else {
                self.issues.push(
                    YamlIssue::new(
                        &name.at,
                        Code::YamlWrongType,
                        format!("an `extends` entry must be a file name, found {}", name.describe()),
                    )
                    .with_help("write `extends: [base.yaml]`"),
                );
                ok = false;
                continue;
            };
            match self.load_base(&relative_to(path, Path::new(rel)), &name.at, stack) {
                Some(b) => {
                    base = Some(match base {
                        Some(acc) => merge(acc, b),
                        None => b,
                    })
                }
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        let own = without_extends(root);
        Some(match base {
            Some(base) => merge(base, own),
            None => own,
        })
    }

    fn load_base(&mut self, path: &Path, via: &Location, stack: &mut Vec<PathBuf>) -> Option<Node> {
        let id = identity(path);
        if stack.contains(&id) || stack.len() >= MAX_CHAIN {
            let code = if stack.contains(&id) { Code::YamlExtendsCycle } else { Code::YamlExtendsTooDeep };
            let message = format!("`extends` chain {}", self.render(stack, &id));
            self.issues
                .push(YamlIssue::new(via, code, message).with_help("a file cannot extend itself, directly or not"));
            return None;
        }
        let text = match self.sources.read(path) {
            Ok(text) => text,
            Err(e) => {
                let message =
                    format!("cannot read `{}` ({e}), reached through {}", self.show(path), self.render(stack, &id));
                self.issues.push(
                    YamlIssue::new(via, Code::PipelineFileUnreadable, message)
                        .with_help("`extends` paths are relative to the file that writes them"),
                );
                return None;
            }
        };
        stack.push(id);
        let node = self.resolve(path, &text, stack);
        stack.pop();
        match node {
            Some(n) if n.as_map().is_none() && !n.is_null() => {
                let message = format!("a base file must be a mapping of pipeline keys, found {}", n.describe());
                self.issues.push(
                    YamlIssue::new(&n.at, Code::YamlWrongType, message).with_help("write `steps:`, `settings:`, …"),
                );
                None
            }
            other => other,
        }
    }

    /// `a.yaml → b.yaml → a.yaml`.
    fn render(&self, stack: &[PathBuf], last: &Path) -> String {
        stack.iter().map(|p| p.as_path()).chain([last]).map(|p| self.show(p)).collect::<Vec<_>>().join(" → ")
    }

    /// `path` relative to the top file's directory when it is under it.
    fn show(&self, path: &Path) -> String {
        let top = std::path::absolute(&self.top_dir).unwrap_or_else(|_| self.top_dir.clone());
        let shown = path.strip_prefix(&top).or_else(|_| path.strip_prefix(&self.top_dir)).unwrap_or(path);
        shown.display().to_string()
    }
}

/// The path a file is known by in cycle checks: canonical when it exists, else absolute.
fn identity(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| std::path::absolute(path).unwrap_or_else(|_| path.to_owned()))
}

fn without_extends(mut root: Node) -> Node {
    if let Value::Map(entries) = &mut root.value {
        entries.retain(|(k, _)| k.as_text() != Some("extends"));
    }
    root
}

/// `own` on top of `base`, by the rules of the module documentation.
pub(crate) fn merge(base: Node, own: Node) -> Node {
    let (Value::Map(base_entries), Value::Map(own_entries)) = (base.value, own.value.clone()) else { return own };
    let merged = merge_entries(base_entries, own_entries, |key, b, o| match key {
        "settings" | "prompts" | "models" => match (b.value, o.value.clone()) {
            (Value::Map(be), Value::Map(oe)) => {
                Node { value: Value::Map(merge_entries(be, oe, |_, _, o| o)), at: o.at }
            }
            _ => o,
        },
        "steps" => merge_steps(b, o),
        _ => o,
    });
    Node { value: Value::Map(merged), at: own.at }
}

fn merge_entries(
    base: Vec<(Node, Node)>,
    own: Vec<(Node, Node)>,
    combine: impl Fn(&str, Node, Node) -> Node,
) -> Vec<(Node, Node)> {
    let mut own: Vec<Option<(Node, Node)>> = own.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for (bk, bv) in base {
        let key = bk.as_text().map(str::to_owned);
        let mine =
            own.iter_mut().find(|e| e.as_ref().is_some_and(|(k, _)| key.is_some() && k.as_text() == key.as_deref()));
        match mine.and_then(Option::take) {
            Some((ok, ov)) => out.push((ok, combine(key.as_deref().unwrap_or_default(), bv, ov))),
            None => out.push((bk, bv)),
        }
    }
    out.extend(own.into_iter().flatten());
    out
}

fn merge_steps(base: Node, own: Node) -> Node {
    let (Value::Seq(mut steps), Value::Seq(own_steps)) = (base.value, own.value.clone()) else { return own };
    let id = |n: &Node| n.get("id").and_then(Node::as_text).map(str::to_owned);
    // A step replaces the base's step of its id; a second step of that id in the same file is a
    // second step (the graph rule reports the duplicate), never a silent replacement.
    let mut written = std::collections::BTreeSet::new();
    for step in own_steps {
        let sid = id(&step);
        let first = sid.as_ref().is_none_or(|sid| written.insert(sid.clone()));
        let replaces = sid.filter(|_| first).and_then(|sid| steps.iter().position(|s| id(s) == Some(sid.clone())));
        match replaces {
            Some(i) => steps[i] = step,
            None => steps.push(step),
        }
    }
    Node { value: Value::Seq(steps), at: own.at }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(text: &str, file: &str) -> Node {
        parse(text, Path::new(file)).unwrap()
    }

    #[test]
    fn own_values_win_and_steps_merge_by_id() {
        let base = tree(
            "name: Base\nsettings: { a: 1, b: 2 }\nsteps:\n  - { id: s, action: x }\n  - { id: t, action: y }\n",
            "base.yaml",
        );
        let own =
            tree("settings: { b: 3, c: 4 }\nsteps:\n  - { id: t, action: z }\n  - { id: u, action: w }\n", "own.yaml");
        let merged = merge(base, own);
        assert_eq!(merged.get("name").unwrap().at.file, Path::new("base.yaml"));
        let settings = merged.get("settings").unwrap();
        let keys: Vec<_> =
            settings.as_map().unwrap().iter().map(|(k, v)| (k.as_text().unwrap(), v.as_int().unwrap())).collect();
        assert_eq!(keys, [("a", 1), ("b", 3), ("c", 4)]);
        assert_eq!(settings.get("a").unwrap().at.file, Path::new("base.yaml"));
        let steps = merged.get("steps").unwrap().as_seq().unwrap();
        let ids: Vec<_> = steps
            .iter()
            .map(|s| (s.get("id").unwrap().as_text().unwrap(), s.get("action").unwrap().as_text().unwrap()))
            .collect();
        assert_eq!(ids, [("s", "x"), ("t", "z"), ("u", "w")]);
        assert_eq!(steps[1].at.file, Path::new("own.yaml"));
    }

    /// A step id written twice in the extending file is two steps, as it is in a file without
    /// `extends`: validation reports `DUPLICATE_STEP_ID` at the second, nothing is merged away.
    #[test]
    fn a_step_id_written_twice_in_one_file_is_kept_twice() {
        let base = tree("steps:\n  - { id: s, action: x }\n  - { id: t, action: y }\n", "base.yaml");
        let own = tree(
            "steps:\n  - { id: t, action: z }\n  - { id: t, action: w }\n  - { id: u, action: v }\n  - { id: u, action: q }\n",
            "own.yaml",
        );
        let merged = merge(base, own);
        let steps = merged.get("steps").unwrap().as_seq().unwrap();
        let ids: Vec<_> = steps
            .iter()
            .map(|s| (s.get("id").unwrap().as_text().unwrap(), s.get("action").unwrap().as_text().unwrap()))
            .collect();
        assert_eq!(ids, [("s", "x"), ("t", "z"), ("t", "w"), ("u", "v"), ("u", "q")]);
    }
}
