//! [`Bm25Index`] as a pipeline backend: it implements [`NodeSearch`] (`search_nodes`) and
//! [`NodeStore`] (`fetch_node_texts`, `expand_dependency_tree`), so one index serves a whole run:
//!
//! ```
//! use ctx::pipeline::StepEnv;
//! use ctx::retrieve::Bm25Index;
//!
//! let index = Bm25Index::from_documents([("sql/usp_Total.sql", "CREATE PROCEDURE dbo.usp_Total AS SELECT 1")]);
//! let env = StepEnv::builder().search(&index).store(&index).build();
//! assert!(env.search_backend().is_some() && env.store_backend().is_some());
//! ```
//!
//! # Dependencies by file name
//!
//! A lexical index knows no call graph, so [`NodeStore::dependencies`] follows the convention of
//! SQL Server and .NET code bases that each object lives in a file named after it
//! (`dbo.usp_ComputeInvoiceTotal` in `usp_ComputeInvoiceTotal.sql`, `class Money` in `Money.cs`,
//! the table `dbo.Invoices` in `invoices.sql`): node `a` depends on node `b` when `b`'s file name
//! without its extension appears in `a`'s text as a whole identifier (letters, digits and `_`;
//! `.` separates, so `dbo.Invoices` names `Invoices`), compared without regard to ASCII case as
//! SQL Server does. Dependencies come in the order of their first mention; several files with the
//! same name are all returned (in id order), except that a node never depends on itself nor on
//! files of its own name (every file that declares `Money` mentions `Money`). Ids not in
//! the index have no text and no dependencies, as the traits require.

use std::collections::HashMap;

use super::Bm25Index;
use crate::pipeline::{BoxError, NodeSearch, NodeStore};
use crate::state::{NodeText, SearchHit};

impl NodeSearch for Bm25Index {
    /// [`Bm25Index::search`]: the `top_k` best files for `query`, best first.
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        Ok(Bm25Index::search(self, query, top_k))
    }
}

impl NodeStore for Bm25Index {
    /// [`Bm25Index::node_text`] for every known id, in the order asked; unknown ids are left out.
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        Ok(ids.iter().filter_map(|id| self.node_text(id).ok()).collect())
    }

    /// The files named by an identifier of `id`'s text (see the documentation of `retrieve`'s pipeline adapters).
    async fn dependencies(&self, id: &str) -> Result<Vec<String>, BoxError> {
        Ok(self.named_dependencies(id))
    }
}

impl Bm25Index {
    /// The ids of the indexed files whose name (without extension) appears as an identifier in
    /// the text of `id`, in the order of first mention; empty for an unknown id. See the
    /// documentation of `retrieve`'s pipeline adapters for the convention.
    ///
    /// ```
    /// use ctx::retrieve::Bm25Index;
    ///
    /// let index = Bm25Index::from_documents([
    ///     ("src/InvoiceService.cs", "class InvoiceService { Money Total() => Run(\"dbo.usp_Total\"); }"),
    ///     ("sql/usp_Total.sql", "CREATE PROCEDURE dbo.usp_Total AS SELECT 1"),
    ///     ("src/Money.cs", "struct Money {}"),
    /// ]);
    /// assert_eq!(index.named_dependencies("src/InvoiceService.cs"), ["src/Money.cs", "sql/usp_Total.sql"]);
    /// assert!(index.named_dependencies("src/Money.cs").is_empty());
    /// ```
    pub fn named_dependencies(&self, id: &str) -> Vec<String> {
        let (Some(text), Some(own_path)) = (self.text(id), self.path_of(id)) else { return Vec::new() };
        let own_stem = file_stem(own_path);
        // Lowercased identifier → position of its first mention.
        let mut first_mention: HashMap<String, usize> = HashMap::new();
        for (position, ident) in identifiers(text).enumerate() {
            first_mention.entry(ident.to_ascii_lowercase()).or_insert(position);
        }
        let mut found: Vec<(usize, &str)> = self
            .ids()
            .filter_map(|other| {
                let stem = file_stem(self.path_of(other).unwrap_or(other));
                if stem.is_empty() || stem.eq_ignore_ascii_case(own_stem) {
                    return None;
                }
                first_mention.get(&stem.to_ascii_lowercase()).map(|&position| (position, other))
            })
            .collect();
        // `ids()` is sorted, and the sort is stable: same-position files stay in id order.
        found.sort_by_key(|(position, _)| *position);
        found.into_iter().map(|(_, other)| other.to_owned()).collect()
    }
}

/// The maximal runs of letters, digits and `_` in `text`.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|s| !s.is_empty())
}

/// The file name of a `/`-separated id without its last extension (`a/b/Money.cs` → `Money`;
/// `.gitignore` → `.gitignore`, which no identifier can match).
fn file_stem(id: &str) -> &str {
    let name = id.rsplit('/').next().unwrap_or(id);
    match name.rfind('.') {
        Some(dot) if dot > 0 => name.get(..dot).unwrap_or(name),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Bm25Index {
        Bm25Index::from_documents([
            (
                "src/InvoiceService.cs",
                "public class InvoiceService {\n  // Calls dbo.usp_ComputeInvoiceTotal, then formats Money.\n  \
                 Money Total(int id) => _db.Run(\"dbo.USP_COMPUTEINVOICETOTAL\", id);\n}",
            ),
            (
                "sql/procedures/usp_ComputeInvoiceTotal.sql",
                "CREATE PROCEDURE dbo.usp_ComputeInvoiceTotal AS\nSELECT * FROM dbo.Invoices",
            ),
            ("sql/schema/invoices.sql", "CREATE TABLE dbo.Invoices (InvoiceId INT)"),
            ("src/Money.cs", "public readonly struct Money { }"),
            ("tests/Money.cs", "// A second file named Money"),
            ("docs/.hidden", "usp_ComputeInvoiceTotal"),
        ])
    }

    #[test]
    fn stems_without_the_last_extension() {
        assert_eq!(file_stem("a/b/Money.cs"), "Money");
        assert_eq!(file_stem("V002__add.sql"), "V002__add");
        assert_eq!(file_stem("x/archive.tar.gz"), "archive.tar");
        assert_eq!(file_stem("x/.gitignore"), ".gitignore");
        assert_eq!(file_stem("Makefile"), "Makefile");
        assert_eq!(file_stem(""), "");
    }

    #[test]
    fn dependencies_follow_first_mention_ignoring_case() {
        let index = corpus();
        assert_eq!(
            index.named_dependencies("src/InvoiceService.cs"),
            ["sql/procedures/usp_ComputeInvoiceTotal.sql", "src/Money.cs", "tests/Money.cs"]
        );
        // The procedure reads the `Invoices` table: `dbo.` is a separate identifier.
        assert_eq!(index.named_dependencies("sql/procedures/usp_ComputeInvoiceTotal.sql"), ["sql/schema/invoices.sql"]);
        // Not on itself nor on a file of the same name; a stem must be a whole identifier.
        assert!(index.named_dependencies("src/Money.cs").is_empty());
        assert!(index.named_dependencies("tests/Money.cs").is_empty());
        assert!(index.named_dependencies("sql/schema/invoices.sql").is_empty());
        assert!(index.named_dependencies("nope").is_empty());
    }

    #[tokio::test]
    async fn serves_as_search_and_store() {
        let index = corpus();
        let hits = NodeSearch::search(&index, "compute invoice total", 2).await.expect("search");
        assert_eq!(hits, Bm25Index::search(&index, "compute invoice total", 2));
        assert_eq!(hits.len(), 2);
        let ids = vec!["src/Money.cs".to_owned(), "missing.cs".to_owned(), "sql/schema/invoices.sql".to_owned()];
        let texts = index.texts(&ids).await.expect("texts");
        let got: Vec<_> = texts.iter().map(|n| (n.id.as_str(), n.path.as_deref())).collect();
        assert_eq!(
            got,
            [("src/Money.cs", Some("src/Money.cs")), ("sql/schema/invoices.sql", Some("sql/schema/invoices.sql"))]
        );
        assert_eq!(index.dependencies("src/Money.cs").await.expect("deps"), Vec::<String>::new());
        assert_eq!(index.dependencies("sql/schema/invoices.sql").await.expect("deps"), Vec::<String>::new());
    }
}
