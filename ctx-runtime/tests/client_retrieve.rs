//! `Bm25Index` over a directory made by the test, and the offline model answering from what it
//! retrieves: the search → fetch → answer path of the demo, without any server.

#![cfg(feature = "bm25")]

use std::fs;
use std::path::Path;

use ctx_runtime::budget::format_node;
use ctx_runtime::classify::classify;
use ctx_runtime::llm::offline::OfflineModel;
use ctx_runtime::llm::{ChatModel, ChatRequest};
use ctx_runtime::retrieve::{Bm25Index, IndexOptions};
use ctx_runtime::state::render_context_blocks;
use ctx_runtime::{ChatMessage, ErrorCode, TokenCounter};

fn write(root: &Path, path: &str, text: &[u8]) {
    let full = root.join(path);
    fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
    fs::write(full, text).expect("write");
}

fn sample() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    write(
        root,
        "Sql/Procedures/usp_GetOrderTotals.sql",
        b"CREATE PROCEDURE dbo.usp_GetOrderTotals @CustomerId INT AS\nBEGIN\n  SELECT o.OrderId, SUM(l.UnitPrice * l.Quantity) AS OrderTotal\n  FROM dbo.Orders o JOIN dbo.OrderLines l ON l.OrderId = o.OrderId\n  WHERE o.CustomerId = @CustomerId\n  GROUP BY o.OrderId;\nEND\n",
    );
    write(
        root,
        "Src/Services/OrderService.cs",
        b"public class OrderService\n{\n    public decimal ComputeOrderTotal(Order order) => order.Lines.Sum(l => l.UnitPrice * l.Quantity);\n}\n",
    );
    write(root, "Src/Models/Customer.cs", b"public class Customer\n{\n    public int CustomerId { get; set; }\n}\n");
    write(
        root,
        "Src/Shipping/ShippingRates.cs",
        "public static class ShippingRates { /* Gewicht in kg — ü */ }\n".as_bytes(),
    );
    write(root, ".git/config", b"[core] order total");
    write(root, "bin/Debug/app.dll.txt", b"order total order total");
    write(root, "assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00order");
    write(root, "legacy/latin1.txt", b"order total caf\xe9");
    write(root, "data/huge.sql", &b"-- order total\n".repeat(1000));
    dir
}

fn options() -> IndexOptions {
    IndexOptions::default().max_file_bytes(4096)
}

#[test]
fn indexes_the_text_files_and_says_what_it_skipped() {
    let dir = sample();
    let index = Bm25Index::from_dir(dir.path(), &options()).expect("index");
    let ids: Vec<&str> = index.ids().collect();
    assert_eq!(
        ids,
        [
            "Sql/Procedures/usp_GetOrderTotals.sql",
            "Src/Models/Customer.cs",
            "Src/Services/OrderService.cs",
            "Src/Shipping/ShippingRates.cs"
        ]
    );
    let skipped: Vec<(&str, &str)> = index.skipped().iter().map(|s| (s.path.as_str(), s.reason.as_str())).collect();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert!(skipped.iter().any(|(p, r)| *p == "assets/logo.png" && r.contains("binary")), "{skipped:?}");
    assert!(skipped.iter().any(|(p, r)| *p == "legacy/latin1.txt" && r.contains("UTF-8")), "{skipped:?}");
    assert!(skipped.iter().any(|(p, r)| *p == "data/huge.sql" && r.contains("max_file_bytes")), "{skipped:?}");
    assert_eq!(index.root(), Some(dir.path()));

    let only_sql = options().extensions(Some(vec!["SQL".into()]));
    let sql = Bm25Index::from_dir(dir.path(), &only_sql).expect("index");
    assert_eq!(sql.ids().collect::<Vec<_>>(), ["Sql/Procedures/usp_GetOrderTotals.sql"]);
}

#[test]
fn ranks_code_for_natural_language_and_identifier_queries() {
    let dir = sample();
    let index = Bm25Index::from_dir(dir.path(), &options()).expect("index");
    let hits = index.search("How is the order total of a customer computed?", 3);
    assert_eq!(hits.len(), 3);
    let top2: Vec<&str> = hits.iter().take(2).map(|h| h.id.as_str()).collect();
    assert!(top2.contains(&"Sql/Procedures/usp_GetOrderTotals.sql"), "{hits:?}");
    assert!(top2.contains(&"Src/Services/OrderService.cs"), "{hits:?}");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "{hits:?}");

    assert_eq!(index.search("ComputeOrderTotal", 1)[0].id, "Src/Services/OrderService.cs");
    assert_eq!(index.search("compute_order_total", 1)[0].id, "Src/Services/OrderService.cs");
    assert_eq!(index.search("usp_GetOrderTotals", 1)[0].id, "Sql/Procedures/usp_GetOrderTotals.sql");
    assert_eq!(index.search("shipping rates", 1)[0].id, "Src/Shipping/ShippingRates.cs");
    assert_eq!(index.search("how are order totals computed", 5), index.search("how are order totals computed", 5));
}

#[test]
fn loads_nodes_by_id_and_names_what_is_wrong() {
    let dir = sample();
    let index = Bm25Index::from_dir(dir.path(), &options()).expect("index");
    let node = index.node_text("Src/Models/Customer.cs").expect("node");
    assert_eq!(node.text, fs::read_to_string(dir.path().join("Src/Models/Customer.cs")).expect("read"));
    assert_eq!(node.path.as_deref(), Some("Src/Models/Customer.cs"));

    let err = index.node_text("Src/Models/Customers.cs").expect_err("unknown");
    assert_eq!(err.code(), "RETRIEVE_UNKNOWN_NODE");
    assert!(err.to_string().contains("did you mean `Src/Models/Customer.cs`"), "{err}");
    assert!(index.node_text("../outside.txt").is_err());

    let missing = Bm25Index::from_dir(dir.path().join("nope"), &options()).expect_err("missing");
    assert_eq!(missing.code(), "RETRIEVE_IO");
    assert!(missing.to_string().contains("nope"), "{missing}");
    let file = Bm25Index::from_dir(dir.path().join("Src/Models/Customer.cs"), &options()).expect_err("a file");
    assert_eq!(file.code(), "RETRIEVE_NOT_A_DIRECTORY");
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_not_followed() {
    let dir = sample();
    let outside = tempfile::tempdir().expect("temp dir");
    write(outside.path(), "secret.txt", b"order total secret");
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).expect("symlink");
    let index = Bm25Index::from_dir(dir.path(), &options()).expect("index");
    assert!(index.ids().all(|id| !id.starts_with("link")), "{:?}", index.ids().collect::<Vec<_>>());
}

/// Issue 26, item 4: 13 of microsoft/sql-server-samples' `.sql` files are UTF-16 with a byte
/// order mark; they were skipped as "binary". A BOM says how to decode: UTF-16 LE, BE, UTF-8.
#[test]
fn utf16_and_utf8_files_with_a_byte_order_mark_are_decoded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = "CREATE PROCEDURE dbo.usp_Refund AS\r\nSELECT N'Gewicht ü 😀' -- refund\r\n";
    let utf16 = |bom: [u8; 2], unit: fn(u16) -> [u8; 2]| {
        let mut bytes = bom.to_vec();
        bytes.extend(text.encode_utf16().flat_map(unit));
        bytes
    };
    write(dir.path(), "le.sql", &utf16([0xff, 0xfe], u16::to_le_bytes));
    write(dir.path(), "be.sql", &utf16([0xfe, 0xff], u16::to_be_bytes));
    write(dir.path(), "utf8.sql", &[&[0xef, 0xbb, 0xbf][..], text.as_bytes()].concat());
    // Without a BOM, NUL bytes still mean binary; an odd length or a lone surrogate is no UTF-16.
    write(dir.path(), "nobom.sql", &text.encode_utf16().flat_map(u16::to_le_bytes).collect::<Vec<_>>());
    write(dir.path(), "odd.sql", &[0xff, 0xfe, b'a', 0, b'b']);
    write(dir.path(), "surrogate.sql", &[0xff, 0xfe, 0x00, 0xd8, b'a', 0]);
    let index = Bm25Index::from_dir(dir.path(), &IndexOptions::default()).expect("index");
    assert_eq!(index.ids().collect::<Vec<_>>(), ["be.sql", "le.sql", "utf8.sql"]);
    for id in ["be.sql", "le.sql", "utf8.sql"] {
        assert_eq!(index.node_text(id).expect("node").text, text, "{id}");
    }
    assert_eq!(index.search("usp_Refund", 3).len(), 3);
    let skipped: Vec<String> = index.skipped().iter().map(ToString::to_string).collect();
    assert_eq!(
        skipped,
        [
            "nobom.sql: binary (contains NUL bytes)",
            "odd.sql: not UTF-16 text (an odd number of bytes after its byte order mark)",
            "surrogate.sql: not UTF-16 text (an unpaired surrogate after its byte order mark)",
        ]
    );
}

/// Every file found and not indexed is listed with its reason, symbolic links included.
#[cfg(unix)]
#[test]
fn skipped_symbolic_links_are_listed() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "a.sql", b"SELECT 1");
    std::os::unix::fs::symlink(dir.path().join("a.sql"), dir.path().join("b.sql")).expect("symlink");
    let index = Bm25Index::from_dir(dir.path(), &IndexOptions::default()).expect("index");
    assert_eq!(index.ids().collect::<Vec<_>>(), ["a.sql"]);
    let skipped: Vec<String> = index.skipped().iter().map(ToString::to_string).collect();
    assert_eq!(skipped, ["b.sql: a symbolic link (links are not followed)"]);
}

/// What the demo does: search, fetch the texts in the node format, ask the offline model.
#[tokio::test]
async fn search_fetch_and_answer_offline() {
    let dir = sample();
    let index = Bm25Index::from_dir(dir.path(), &options()).expect("index");
    let question = "How is the order total of a customer computed?";
    let blocks: Vec<String> = index
        .search(question, 2)
        .iter()
        .map(|hit| {
            let node = index.node_text(&hit.id).expect("node");
            let language = classify(&node.text, node.path.as_deref());
            format_node(&node, language, false, &node.text)
        })
        .collect();
    let user = format!("### Context:\n{}\n\n### User:\n{question}\n\n", render_context_blocks(&blocks));
    let model = OfflineModel::new(TokenCounter::for_encoding(ctx_runtime::Encoding::Cl100kBase));
    let request = ChatRequest::new(vec![ChatMessage::system("Answer from the context."), ChatMessage::user(user)], 120);
    let reply = model.chat(&request).await.expect("reply");
    assert!(reply.content.contains("[Sql/Procedures/usp_GetOrderTotals.sql]"), "{}", reply.content);
    assert!(reply.content.contains("[Src/Services/OrderService.cs]"), "{}", reply.content);
    let counter = TokenCounter::for_encoding(ctx_runtime::Encoding::Cl100kBase);
    assert!(counter.count(&reply.content).expect("count") <= 120);
    assert_eq!(reply.usage.map(|u| u.prompt_tokens), Some(counter.count_messages(&request.messages).expect("count")));
}
