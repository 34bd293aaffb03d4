//! [`Bm25Index`]: the files of a directory, ranked for a query with BM25 over code-aware tokens.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use bm25::{Embedder, EmbedderBuilder, Scorer};
use serde_json::Value;

use super::RetrieveError;
use super::chunk::{Chunk, ChunkOptions, Chunker};
use super::tokenize::CodeTokenizer;
use crate::state::{NodeText, SearchHit};

/// Which files of a directory are indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexOptions {
    /// Only files with one of these extensions (lowercase, without the dot); `None` = every text
    /// file.
    pub extensions: Option<Vec<String>>,
    /// Larger files are skipped (and listed in [`Bm25Index::skipped`]).
    pub max_file_bytes: u64,
    /// Index files and directories whose names start with `.`.
    pub include_hidden: bool,
    /// Directory names never entered (build output, dependencies).
    pub exclude_dirs: Vec<String>,
    /// `None` (the default): one node per file, its id the relative path, as before chunking
    /// existed. `Some`: every file is cut into chunks of at most `max_tokens` (markdown by
    /// headings, code by top-level items, text by tokens; see [`crate::retrieve::chunk`]) and
    /// each chunk is a node (`path#chunk-3`, `path#install`). Asking for a chunk size means
    /// asking for chunks: an index whose nodes may be larger than the evidence budget would have
    /// `fetch_node_texts` truncate them.
    pub chunking: Option<ChunkOptions>,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            extensions: None,
            max_file_bytes: 1024 * 1024,
            include_hidden: false,
            exclude_dirs: vec!["target".into(), "node_modules".into(), "bin".into(), "obj".into()],
            chunking: None,
        }
    }
}

/// A file that was found but not indexed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFile {
    /// Its path relative to the root, `/`-separated.
    pub path: String,
    /// Why: too large, not UTF-8 text, binary, unreadable.
    pub reason: String,
}

struct Doc {
    id: String,
    /// The file it comes from (the id itself for whole files).
    path: String,
    text: String,
    /// For a chunk: its title and first and last lines in the file.
    chunk: Option<(Option<String>, usize, usize)>,
}

impl Doc {
    fn whole(id: String, text: String) -> Self {
        Doc { path: id.clone(), id, text, chunk: None }
    }
}

impl From<Chunk> for Doc {
    fn from(c: Chunk) -> Self {
        Doc { id: c.id, path: c.path, text: c.text, chunk: Some((c.title, c.start_line, c.end_line)) }
    }
}

/// An in-memory BM25 index over documents identified by their relative paths.
///
/// Each file is indexed with its path (so `OrderService.cs` matches "order service") followed by
/// its text. Scores are `bm25`'s (k1 = 1.2, b = 0.75, average length fitted to the corpus); ties
/// are broken by id, so rankings are deterministic. Symbolic links are not followed: the index
/// never reads outside its root.
///
/// ```
/// use ctx::retrieve::Bm25Index;
/// let index = Bm25Index::from_documents([
///     ("sql/orders.sql", "CREATE PROCEDURE usp_GetOrderTotals AS SELECT SUM(total) FROM Orders"),
///     ("src/Customer.cs", "public class Customer { public string Name { get; set; } }"),
/// ]);
/// let hits = index.search("how are order totals computed", 5);
/// assert_eq!(hits[0].id, "sql/orders.sql");
/// assert_eq!(index.node_text("src/Customer.cs")?.path.as_deref(), Some("src/Customer.cs"));
/// # Ok::<(), ctx::retrieve::RetrieveError>(())
/// ```
pub struct Bm25Index {
    root: Option<PathBuf>,
    docs: Vec<Doc>,
    by_id: HashMap<String, usize>,
    embedder: Embedder<u32, CodeTokenizer>,
    scorer: Scorer<usize, u32>,
    skipped: Vec<SkippedFile>,
}

impl fmt::Debug for Bm25Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bm25Index")
            .field("root", &self.root)
            .field("documents", &self.docs.len())
            .field("avgdl", &self.embedder.avgdl())
            .field("skipped", &self.skipped.len())
            .finish()
    }
}

impl Bm25Index {
    /// Indexes the files under `root` chosen by `options`. Files that cannot be indexed (too
    /// large, not text) are skipped and listed in [`Self::skipped`]; a root that is missing or
    /// not a directory, or a directory that cannot be listed, is an error naming the path.
    pub fn from_dir(root: impl AsRef<Path>, options: &IndexOptions) -> Result<Self, RetrieveError> {
        let root = root.as_ref();
        let meta = std::fs::metadata(root).map_err(|e| RetrieveError::io(root, &e))?;
        if !meta.is_dir() {
            return Err(RetrieveError::NotADirectory { path: root.display().to_string() });
        }
        let mut files = BTreeMap::new();
        let mut skipped = Vec::new();
        walk(root, root, options, &mut files, &mut skipped)?;
        let docs = match &options.chunking {
            None => files.into_iter().map(|(id, text)| Doc::whole(id, text)).collect(),
            Some(chunking) => {
                let chunker = Chunker::from_options(chunking.clone())
                    .map_err(|source| RetrieveError::Chunk { path: root.display().to_string(), source })?;
                let mut docs = Vec::new();
                for (path, text) in files {
                    let chunks = chunker
                        .chunk(&path, &text)
                        .map_err(|source| RetrieveError::Chunk { path: path.clone(), source })?;
                    docs.extend(chunks.into_iter().map(Doc::from));
                }
                docs
            }
        };
        let mut index = Self::build(docs);
        index.root = Some(root.to_path_buf());
        index.skipped = skipped;
        Ok(index)
    }

    /// Indexes in-memory documents `(id, text)`; a later document with the same id replaces an
    /// earlier one.
    pub fn from_documents<I, S, T>(documents: I) -> Self
    where
        I: IntoIterator<Item = (S, T)>,
        S: Into<String>,
        T: Into<String>,
    {
        let docs: BTreeMap<String, String> = documents.into_iter().map(|(id, text)| (id.into(), text.into())).collect();
        Self::build(docs.into_iter().map(|(id, text)| Doc::whole(id, text)).collect())
    }

    /// Indexes chunks (from [`Chunker::chunk`]), in the order given; a later chunk with the same
    /// id replaces an earlier one. A chunk is indexed with its path and title before its text,
    /// so a heading or a file name matches the question too.
    ///
    /// ```
    /// use ctx::retrieve::{Bm25Index, ChunkOptions, Chunker};
    /// use ctx::tokens::TokenCounter;
    ///
    /// let chunker = Chunker::new(TokenCounter::for_model("gpt-4o")?, ChunkOptions::new(64))?;
    /// let chunks = chunker.chunk("guide.md", "# Install\nRun cargo.\n# Refunds\nRefunds take 5 days.\n")?;
    /// let index = Bm25Index::from_chunks(chunks);
    /// assert_eq!(index.search("how long do refunds take", 1)[0].id, "guide.md#refunds");
    /// let node = index.node_text("guide.md#refunds")?;
    /// assert_eq!(node.path.as_deref(), Some("guide.md"));
    /// assert_eq!(node.metadata["start_line"], 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_chunks(chunks: impl IntoIterator<Item = Chunk>) -> Self {
        let mut docs: Vec<Doc> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        for chunk in chunks {
            match at.get(&chunk.id) {
                Some(&i) => docs[i] = Doc::from(chunk),
                None => {
                    at.insert(chunk.id.clone(), docs.len());
                    docs.push(Doc::from(chunk));
                }
            }
        }
        Self::build(docs)
    }

    fn build(docs: Vec<Doc>) -> Self {
        let indexed: Vec<String> = docs
            .iter()
            .map(|d| match &d.chunk {
                Some((Some(title), _, _)) => format!("{}\n{title}\n{}", d.path, d.text),
                _ => format!("{}\n{}", d.path, d.text),
            })
            .collect();
        let corpus: Vec<&str> = indexed.iter().map(String::as_str).collect();
        let embedder =
            EmbedderBuilder::<u32, CodeTokenizer>::with_tokenizer_and_fit_to_corpus(CodeTokenizer::new(), &corpus)
                .build();
        let mut scorer = Scorer::new();
        for (i, doc) in corpus.iter().enumerate() {
            scorer.upsert(&i, embedder.embed(doc));
        }
        let by_id = docs.iter().enumerate().map(|(i, d)| (d.id.clone(), i)).collect();
        Bm25Index { root: None, docs, by_id, embedder, scorer, skipped: Vec::new() }
    }

    /// The `top_k` best documents for `query`, best first; only documents sharing at least one
    /// token with the query are returned.
    pub fn search(&self, query: &str, top_k: usize) -> Vec<SearchHit> {
        if top_k == 0 {
            return Vec::new();
        }
        let query = self.embedder.embed(query);
        let mut matches: Vec<(f32, &str)> = self
            .scorer
            .matches(&query)
            .into_iter()
            .filter_map(|m| self.docs.get(m.id).map(|d| (m.score, d.id.as_str())))
            .collect();
        matches.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        matches
            .into_iter()
            .take(top_k)
            .map(|(score, id)| SearchHit { id: id.to_owned(), score: f64::from(score) })
            .collect()
    }

    /// The text of document `id`.
    pub fn text(&self, id: &str) -> Option<&str> {
        self.doc(id).map(|d| d.text.as_str())
    }

    /// The file document `id` comes from (the id itself when files are not chunked).
    pub fn path_of(&self, id: &str) -> Option<&str> {
        self.doc(id).map(|d| d.path.as_str())
    }

    fn doc(&self, id: &str) -> Option<&Doc> {
        self.by_id.get(id).and_then(|&i| self.docs.get(i))
    }

    /// Document `id` as a node: its id, its path (the file), its text, and metadata
    /// `extension`, `bytes` and `lines`; a chunk also has `start_line` and `end_line` (its lines
    /// in the file, from 1) and `title` when it has one. An unknown id is an error that suggests
    /// the closest known one.
    pub fn node_text(&self, id: &str) -> Result<NodeText, RetrieveError> {
        let Some(doc) = self.doc(id) else {
            let suggestion = self
                .ids()
                .map(|known| (strsim::normalized_levenshtein(id, known), known))
                .filter(|(similarity, _)| *similarity >= 0.5)
                .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
                .map(|(_, known)| known.to_owned());
            return Err(RetrieveError::UnknownNode { id: id.to_owned(), suggestion });
        };
        let text = doc.text.as_str();
        let mut node = NodeText::new(id, text).with_path(doc.path.as_str());
        if let Some((title, start_line, end_line)) = &doc.chunk {
            node.metadata.insert("start_line".into(), Value::from(*start_line));
            node.metadata.insert("end_line".into(), Value::from(*end_line));
            if let Some(title) = title {
                node.metadata.insert("title".into(), Value::from(title.as_str()));
            }
        }
        if let Some(ext) = Path::new(&doc.path).extension().and_then(|e| e.to_str()) {
            node.metadata.insert("extension".into(), Value::from(ext.to_lowercase()));
        }
        node.metadata.insert("bytes".into(), Value::from(text.len()));
        node.metadata.insert("lines".into(), Value::from(text.lines().count()));
        Ok(node)
    }

    /// The nodes for `ids`, in that order; the first unknown id is an error.
    pub fn node_texts<S: AsRef<str>>(&self, ids: &[S]) -> Result<Vec<NodeText>, RetrieveError> {
        ids.iter().map(|id| self.node_text(id.as_ref())).collect()
    }

    /// Every document id: sorted for whole files, in file then chunk order for chunks.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.docs.iter().map(|d| d.id.as_str())
    }

    /// How many documents are indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The directory indexed by [`Self::from_dir`].
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Files found under the root but not indexed.
    pub fn skipped(&self) -> &[SkippedFile] {
        &self.skipped
    }
}

/// Collects the indexable files under `dir` into `files` (relative id → text).
fn walk(
    root: &Path,
    dir: &Path,
    options: &IndexOptions,
    files: &mut BTreeMap<String, String>,
    skipped: &mut Vec<SkippedFile>,
) -> Result<(), RetrieveError> {
    let entries = std::fs::read_dir(dir).map_err(|e| RetrieveError::io(dir, &e))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| RetrieveError::io(dir, &e))?;
        paths.push(entry.path());
    }
    paths.sort();
    for path in paths {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') && !options.include_hidden {
            continue;
        }
        let id = relative_id(root, &path);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) => {
                skipped.push(SkippedFile { path: id, reason: format!("unreadable: {e}") });
                continue;
            }
        };
        if meta.is_dir() {
            if !options.exclude_dirs.contains(&name) {
                walk(root, &path, options, files, skipped)?;
            }
            continue;
        }
        if !meta.is_file() {
            continue;
        }
        if let Some(exts) = &options.extensions {
            let ext = path.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
            if !exts.iter().any(|x| x.eq_ignore_ascii_case(&ext)) {
                continue;
            }
        }
        if meta.len() > options.max_file_bytes {
            let reason = format!("{} bytes, more than max_file_bytes = {}", meta.len(), options.max_file_bytes);
            skipped.push(SkippedFile { path: id, reason });
            continue;
        }
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                skipped.push(SkippedFile { path: id, reason: format!("unreadable: {e}") });
                continue;
            }
        };
        if bytes.contains(&0) {
            skipped.push(SkippedFile { path: id, reason: "binary (contains NUL bytes)".into() });
            continue;
        }
        match String::from_utf8(bytes) {
            Ok(text) => {
                // A BOM is an encoding marker, not text.
                let text = text.strip_prefix('\u{feff}').map(str::to_owned).unwrap_or(text);
                files.insert(id, text);
            }
            Err(_) => skipped.push(SkippedFile { path: id, reason: "not UTF-8 text".into() }),
        }
    }
    Ok(())
}

/// `path` relative to `root`, with `/` separators on every platform.
fn relative_id(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::ErrorCode;

    fn corpus() -> Bm25Index {
        Bm25Index::from_documents([
            (
                "db/orders.sql",
                "CREATE PROCEDURE usp_GetOrderTotals AS\nSELECT o.id, SUM(l.price) AS total FROM Orders o",
            ),
            ("src/OrderService.cs", "public class OrderService {\n  public decimal ComputeTotal(Order order) { }\n}"),
            ("src/Customer.cs", "public class Customer {\n  public string Name { get; set; }\n}"),
            ("README.md", "A sample shop: customers place orders."),
        ])
    }

    #[test]
    fn can_be_shared_across_tasks() {
        fn shareable<T: Send + Sync + 'static>() {}
        shareable::<Bm25Index>();
        shareable::<crate::llm::offline::OfflineModel>();
        #[cfg(feature = "openai")]
        shareable::<crate::llm::openai::OpenAiClient>();
    }

    #[test]
    fn ranks_by_relevance_and_breaks_ties_by_id() {
        let index = corpus();
        let hits = index.search("usp_GetOrderTotals", 10);
        assert_eq!(hits[0].id, "db/orders.sql", "{hits:?}");
        let hits = index.search("ComputeTotal in the order service", 2);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].id, "src/OrderService.cs", "{hits:?}");
        assert!(hits[0].score >= hits[1].score);
        assert!(index.search("kubernetes", 10).is_empty());
        assert!(index.search("order", 0).is_empty());
        let twins = Bm25Index::from_documents([("b", "same words"), ("a", "same words")]);
        let ids: Vec<String> = twins.search("words", 5).into_iter().map(|h| h.id).collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[test]
    fn unknown_ids_suggest_the_closest() {
        let index = corpus();
        let err = index.node_text("src/OrderServce.cs").expect_err("unknown");
        assert_eq!(err.code(), "RETRIEVE_UNKNOWN_NODE");
        assert!(err.to_string().contains("did you mean `src/OrderService.cs`"), "{err}");
        let node = index.node_text("src/Customer.cs").expect("known");
        assert_eq!(node.metadata.get("extension"), Some(&Value::from("cs")));
        assert_eq!(node.metadata.get("lines"), Some(&Value::from(3)));
        assert!(index.node_texts(&["README.md", "nope"]).is_err());
    }
}
