//! SQL statements inside C# string literals.

use crate::compact::csharp;

/// Whether any string literal of a C# text holds a SQL statement.
pub(super) fn has_embedded_sql(text: &str) -> bool {
    csharp::lex(text)
        .strings
        .into_iter()
        .any(|range| text.get(range).is_some_and(|lit| looks_like_sql_statement(literal_body(lit))))
}

/// The body of a C# string literal token: prefix and quotes removed.
fn literal_body(token: &str) -> &str {
    token.trim_start_matches(['$', '@']).trim_matches('"')
}

/// Object kinds after `CREATE` / `ALTER` / `DROP`.
const OBJECT_KINDS: &[&str] = &[
    "table",
    "view",
    "procedure",
    "proc",
    "function",
    "trigger",
    "index",
    "unique",
    "clustered",
    "nonclustered",
    "schema",
    "type",
    "sequence",
    "database",
    "synonym",
    "or",
];

/// Whether `text` reads as a SQL statement rather than as a sentence that starts with a SQL verb
/// ("Select the invoices from last month" is English; `select id from t where x = 1` is SQL).
///
/// ```
/// use ctx::compact::looks_like_sql_statement;
/// assert!(looks_like_sql_statement("SELECT i.Id, i.Total FROM dbo.Invoices AS i"));
/// assert!(looks_like_sql_statement("exec dbo.usp_ComputeInvoiceTotal @InvoiceId = @id"));
/// assert!(!looks_like_sql_statement("Select the invoices from last month, then click Export."));
/// assert!(!looks_like_sql_statement("Update failed: the invoice was modified by another user."));
/// ```
pub fn looks_like_sql_statement(text: &str) -> bool {
    let text = text.trim_start();
    let head: String = text.chars().take(400).collect();
    let lower = head.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().take(40).collect();
    let Some(first) = words.first() else { return false };
    let first_original = head.split_whitespace().next().unwrap_or("");
    let shouted = first_original.len() > 1 && first_original.chars().all(|c| c.is_ascii_uppercase());
    let has_word =
        |w: &str| words.iter().any(|x| x.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_') == w);
    let sqlish = shouted
        || ["*", "@", "[", "=", " where ", " join ", " group by ", " order by ", "::"]
            .iter()
            .any(|m| lower.contains(m));
    let second = words.get(1).copied().unwrap_or("");
    // A query parameter (`@id`, `@@ROWCOUNT`): what an English sentence never has after a verb.
    let param = |w: &str| {
        let name = w.trim_start_matches('@').trim_end_matches([',', ';', ')']);
        w.starts_with('@') && !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    // `select 1`, `select 1 as x`, `select 1, 2`: a bare value list.
    let number = second.trim_end_matches(',').parse::<f64>().is_ok()
        && (words.len() == 2 || second.ends_with(',') || words.get(2) == Some(&"as"));
    match *first {
        "select" => has_word("from") && sqlish || (shouted && words.len() > 1) || param(second) || number,
        "insert" => {
            (second == "into" || shouted || words.iter().any(|w| w.split(['(', ',']).any(param)))
                && (has_word("values") || has_word("select") || lower.contains('('))
        }
        "update" => has_word("set") && sqlish,
        "delete" => (second == "from" || has_word("where")) && sqlish,
        "merge" => has_word("using") && sqlish,
        "with" => has_word("as") && has_word("select") && lower.contains('('),
        "exec" | "execute" => {
            let target = second.trim_end_matches(';');
            !target.is_empty()
                && target.chars().all(|c| c.is_ascii_alphanumeric() || "_.[]@".contains(c))
                && (shouted || target.contains(['.', '_', '@', '[']))
        }
        "create" | "alter" | "drop" => OBJECT_KINDS.contains(&second) && (shouted || sqlish || lower.contains('(')),
        "truncate" => second == "table",
        "declare" => second.starts_with('@'),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_and_sentences() {
        for sql in [
            "SELECT * FROM t",
            "select id, name from customers where country = @c",
            "INSERT INTO dbo.Payments (InvoiceId, Amount) VALUES (@id, @amount)",
            "UPDATE dbo.Invoices SET Status = 'PAID' WHERE InvoiceId = @id",
            "DELETE FROM dbo.InvoiceLines WHERE InvoiceId = @id",
            "WITH x AS (SELECT 1 AS a) SELECT a FROM x",
            "EXEC dbo.usp_IssueInvoice @InvoiceId = 1",
            "CREATE TABLE #tmp (Id INT)",
            "SELECT SCOPE_IDENTITY()",
            "\nSELECT i.InvoiceId\nFROM   dbo.Invoices AS i",
        ] {
            assert!(looks_like_sql_statement(sql), "{sql}");
        }
        for text in [
            "Select a customer first.",
            "Select the invoices from last month, then click Export.",
            "Delete this draft?",
            "Update available",
            "Execute the payment run now",
            "With great power comes great responsibility",
            "Invoice {0} was created",
            "",
        ] {
            assert!(!looks_like_sql_statement(text), "{text}");
        }
    }

    #[test]
    fn finds_sql_in_every_literal_form() {
        assert!(has_embedded_sql("const string Q = @\"\nSELECT Id\nFROM dbo.T\nWHERE Id = @id\";"));
        assert!(has_embedded_sql("var q = \"\"\"\n    SELECT Id FROM dbo.T\n    \"\"\";"));
        assert!(has_embedded_sql("db.Database.SqlQuery<int>($\"SELECT Id FROM dbo.T WHERE Id = {id}\")"));
        assert!(!has_embedded_sql("throw new InvalidOperationException(\"Select a customer first.\");"));
        assert!(!has_embedded_sql("// SELECT * FROM t  (a comment, not a literal)\nvar x = 1;"));
    }
}
