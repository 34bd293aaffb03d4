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

/// Which files of a directory are indexed. Start from the default and change what you need
/// with the setters named after the fields:
///
/// ```
/// use ctx::retrieve::{ChunkOptions, IndexOptions};
///
/// let options = IndexOptions::default()
///     .extensions(Some(vec!["md".into(), "rs".into()]))
///     .chunking(Some(ChunkOptions::new(400).with_overlap(20)));
/// assert!(!options.include_hidden);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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

ctx_spec::setters!(IndexOptions {
    extensions: Option<Vec<String>>,
    max_file_bytes: u64,
    include_hidden: bool,
    exclude_dirs: Vec<String>,
    chunking: Option<ChunkOptions>,
});

/// A file that the options select but that was not indexed, and why.
///
/// Its `Display` is `path: reason`, one line, for a tool to print.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkippedFile {
    /// Its path relative to the root, `/`-separated.
    pub path: String,
    /// Why: too large, binary, not UTF-8 (or, after a byte order mark, not UTF-16 or UTF-32)
    /// text, a symbolic link, not a regular file, unreadable.
    pub reason: String,
}

impl fmt::Display for SkippedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
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
    /// Indexes the files under `root` chosen by `options`. A text is decoded by its byte order
    /// mark (UTF-8, UTF-16 or UTF-32, little or big endian), else as UTF-8. Files that cannot be
    /// indexed (too large, binary, not text, symbolic links, unreadable) are skipped and listed in
    /// [`Self::skipped`]; a root that is missing or not a directory, or a directory that cannot be
    /// listed, is an error naming the path.
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
        matches.into_iter().take(top_k).map(|(score, id)| SearchHit::new(id.to_owned(), f64::from(score))).collect()
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
            let suggestion = ctx_spec::validation::did_you_mean(id, self.ids()).map(str::to_owned);
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

    /// Files found under the root and selected by the options, but not indexed, with the reason
    /// (files hidden, in an excluded directory or of another extension are not listed).
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
        if meta.file_type().is_symlink() {
            skipped.push(SkippedFile { path: id, reason: "a symbolic link (links are not followed)".into() });
            continue;
        }
        if !meta.is_file() {
            skipped.push(SkippedFile { path: id, reason: "not a regular file".into() });
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
        match decode(bytes) {
            Ok(text) => {
                files.insert(id, text);
            }
            Err(reason) => skipped.push(SkippedFile { path: id, reason }),
        }
    }
    Ok(())
}

/// The text of a file: decoded by its byte order mark (which is an encoding marker, not text),
/// else as UTF-8. `Err` says why it is not text.
fn decode(bytes: Vec<u8>) -> Result<String, String> {
    let utf16 = |body: &[u8], unit: fn([u8; 2]) -> u16| {
        if !body.len().is_multiple_of(2) {
            return Err("an odd number of bytes after its byte order mark".to_owned());
        }
        char::decode_utf16(body.chunks_exact(2).map(|c| unit([c[0], c[1]])))
            .collect::<Result<String, _>>()
            .map_err(|_| "an unpaired surrogate after its byte order mark".to_owned())
    };
    let utf32 = |body: &[u8], unit: fn([u8; 4]) -> u32| {
        if !body.len().is_multiple_of(4) {
            return Err("a number of bytes after its byte order mark that is not a multiple of 4".to_owned());
        }
        body.chunks_exact(4)
            .map(|c| unit([c[0], c[1], c[2], c[3]]))
            .map(|u| char::from_u32(u).ok_or_else(|| format!("U+{u:X} is not a character")))
            .collect::<Result<String, String>>()
    };
    let wide = |name: &str, text: Result<String, String>| match text {
        Ok(text) if text.contains('\0') => Err(format!("binary (NUL characters after a {name} byte order mark)")),
        Ok(text) => Ok(text),
        Err(why) => Err(format!("not {name} text ({why})")),
    };
    match bytes.as_slice() {
        // UTF-32 first: its little-endian BOM starts like UTF-16's.
        [0xff, 0xfe, 0, 0, body @ ..] => wide("UTF-32", utf32(body, u32::from_le_bytes)),
        [0, 0, 0xfe, 0xff, body @ ..] => wide("UTF-32", utf32(body, u32::from_be_bytes)),
        [0xff, 0xfe, body @ ..] => wide("UTF-16", utf16(body, u16::from_le_bytes)),
        [0xfe, 0xff, body @ ..] => wide("UTF-16", utf16(body, u16::from_be_bytes)),
        _ if bytes.contains(&0) => Err("binary (contains NUL bytes)".into()),
        _ => match String::from_utf8(bytes) {
            Ok(text) => Ok(text.strip_prefix('\u{feff}').map(str::to_owned).unwrap_or(text)),
            Err(_) => Err("not UTF-8 text".into()),
        },
    }
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
    fn decodes_by_the_byte_order_mark() {
        let text = "SELECT N'ü 😀'\r\n";
        let with = |bom: &[u8], body: Vec<u8>| [bom, &body].concat();
        let le16 = text.encode_utf16().flat_map(u16::to_le_bytes).collect::<Vec<_>>();
        let be32 = text.chars().flat_map(|c| u32::from(c).to_be_bytes()).collect::<Vec<_>>();
        let le32 = text.chars().flat_map(|c| u32::from(c).to_le_bytes()).collect::<Vec<_>>();
        assert_eq!(decode(with(&[0xff, 0xfe], le16.clone())).as_deref(), Ok(text));
        assert_eq!(decode(with(&[0, 0, 0xfe, 0xff], be32)).as_deref(), Ok(text));
        assert_eq!(decode(with(&[0xff, 0xfe, 0, 0], le32)).as_deref(), Ok(text));
        assert_eq!(decode(with(&[0xef, 0xbb, 0xbf], text.into())).as_deref(), Ok(text));
        assert_eq!(decode(text.into()).as_deref(), Ok(text));
        assert_eq!(decode(le16).unwrap_err(), "binary (contains NUL bytes)");
        assert_eq!(
            decode(vec![0xff, 0xfe, b'a', 0, 0, 0]).unwrap_err(),
            "binary (NUL characters after a UTF-16 byte order mark)"
        );
        assert!(decode(vec![0xff, 0xfe, 0, 0, 0, 0, 0x11, 0]).unwrap_err().contains("U+110000 is not a character"));
        assert_eq!(decode(vec![0xff]).unwrap_err(), "not UTF-8 text");
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
