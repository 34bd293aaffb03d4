//! The classifier on realistic snippets, without paths (content alone must decide), and the
//! path hints.

use super::*;

fn content(text: &str) -> Language {
    classify(text, None)
}

const STORED_PROCEDURE: &str = r#"
CREATE PROCEDURE [dbo].[GetOrdersByCustomer]
    @CustomerId int,
    @FromDate datetime = NULL
AS
BEGIN
    SET NOCOUNT ON;
    -- orders without a date are legacy imports
    SELECT o.OrderId, o.OrderDate, o.Total
    FROM dbo.Orders o
    WHERE o.CustomerId = @CustomerId
      AND (@FromDate IS NULL OR o.OrderDate >= @FromDate)
    ORDER BY o.OrderDate DESC
END
GO
"#;

const MIGRATION: &str = "ALTER TABLE orders ADD COLUMN shipped_at timestamptz NULL;\n\
UPDATE orders SET shipped_at = updated_at WHERE status = 'shipped';\n\
CREATE INDEX idx_orders_shipped_at ON orders (shipped_at);\n";

const VIEW: &str = "create view active_customers as\nselect c.id, c.name, count(o.id) as orders\nfrom customers c\n\
left join orders o on o.customer_id = c.id\nwhere c.deleted_at is null\ngroup by c.id, c.name;\n";

const ONE_QUERY: &str =
    "SELECT TOP (10) ProductId, SUM(Quantity) AS Sold FROM Sales.OrderLines GROUP BY ProductId ORDER BY Sold DESC";

const LINQ: &str = r#"
using System.Linq;
using Microsoft.EntityFrameworkCore;

namespace Shop.Reports;

public class SalesReport
{
    private readonly ShopContext _db;

    public SalesReport(ShopContext db) => _db = db;

    public async Task<List<TopProduct>> TopAsync(int take) =>
        await _db.OrderLines
            .GroupBy(l => l.ProductId)
            .Select(g => new TopProduct(g.Key, g.Sum(l => l.Quantity)))
            .OrderByDescending(p => p.Sold)
            .Take(take)
            .ToListAsync();
}
"#;

const DAPPER: &str = r#"
public async Task<Order?> GetAsync(int id)
{
    using var conn = _factory.Create();
    return await conn.QuerySingleOrDefaultAsync<Order>(
        @"SELECT o.OrderId, o.CustomerId, o.Total
          FROM dbo.Orders o
          WHERE o.OrderId = @id", new { id });
}
"#;

const EF_RAW: &str = "var blogs = context.Blogs\n    .FromSqlRaw(\"SELECT * FROM dbo.Blogs WHERE Rating > {0}\", minRating)\n    .ToList();\n";

const RAZOR: &str = r#"@page "/orders"
@model OrdersModel

<h1>Orders</h1>
@foreach (var order in Model.Orders)
{
    <p>@order.Number: @order.Total.ToString("C")</p>
}
"#;

const CSPROJ: &str = "<Project Sdk=\"Microsoft.NET.Sdk\">\n  <PropertyGroup>\n    <TargetFramework>net8.0</TargetFramework>\n  </PropertyGroup>\n</Project>\n";

const PROSE: &str = "The invoice total is the sum of the net amounts of its lines plus the tax. Tax is computed once \
per rate on the sum of the net amounts, and every amount is rounded to cents, half away from zero.\n\nSelect the invoices \
from last month and update the report before you send it.";

const PYTHON: &str = r#"
import sqlite3

def top_products(conn, limit=10):
    """Return the best sellers."""
    cur = conn.execute(
        "SELECT product_id, SUM(quantity) FROM order_lines GROUP BY product_id ORDER BY 2 DESC LIMIT ?",
        (limit,),
    )
    return cur.fetchall()

if __name__ == "__main__":
    print(top_products(sqlite3.connect("shop.db")))
"#;

const JAVASCRIPT: &str = r#"
const { Pool } = require("pg");
const pool = new Pool();

async function topProducts(limit) {
  const { rows } = await pool.query(
    "SELECT product_id, SUM(quantity) AS sold FROM order_lines GROUP BY product_id ORDER BY sold DESC LIMIT $1",
    [limit]
  );
  return rows;
}

module.exports = { topProducts };
"#;

const TYPESCRIPT: &str = "import { Injectable } from '@angular/core';\n\nexport interface Order {\n  id: number;\n  total: number;\n}\n\n\
export class OrderService {\n  private readonly cache = new Map<number, Order>();\n  get(id: number): Order | undefined {\n    return this.cache.get(id);\n  }\n}\n";

const JAVA: &str = "package shop.reports;\n\nimport java.util.List;\n\npublic class SalesReport {\n    @Override\n    public String toString() {\n        return \"SalesReport\";\n    }\n}\n";

#[test]
fn sql_samples() {
    for (name, text) in
        [("procedure", STORED_PROCEDURE), ("migration", MIGRATION), ("view", VIEW), ("query", ONE_QUERY)]
    {
        assert_eq!(content(text), Language::Sql, "{name}");
    }
}

#[test]
fn dotnet_samples() {
    assert_eq!(content(LINQ), Language::Dotnet);
    assert_eq!(content(RAZOR), Language::Dotnet);
    assert_eq!(content(CSPROJ), Language::Dotnet);
    assert_eq!(content(DAPPER), Language::DotnetWithSql);
    assert_eq!(content(EF_RAW), Language::DotnetWithSql);
}

#[test]
fn everything_else_is_unknown() {
    for (name, text) in [
        ("prose", PROSE),
        ("python", PYTHON),
        ("javascript", JAVASCRIPT),
        ("typescript", TYPESCRIPT),
        ("java", JAVA),
        ("empty", ""),
        ("blank", " \n\t\n"),
    ] {
        assert_eq!(content(text), Language::Unknown, "{name}");
    }
}

#[test]
fn paths_overrule_content() {
    assert_eq!(classify(PYTHON, Some("scripts/report.py")), Language::Unknown);
    assert_eq!(classify(STORED_PROCEDURE, Some("docs/how-to.md")), Language::Unknown);
    assert_eq!(classify(PROSE, Some("db/notes.sql")), Language::Sql);
    assert_eq!(classify(LINQ, Some("Reports/SalesReport.cs")), Language::Dotnet);
    assert_eq!(classify(DAPPER, Some("Data/OrderRepository.cs")), Language::DotnetWithSql);
    assert_eq!(classify(RAZOR, Some("Pages/Orders.cshtml")), Language::Dotnet);
    // An unknown extension falls back to the content.
    assert_eq!(classify(STORED_PROCEDURE, Some("db/GetOrders.prc")), Language::Sql);
}

// Issue 14, item 9: real .NET files that carry little C# syntax, and a JavaScript file that
// borrows C#'s `///` comments.

const DAPPER_TESTS: &str = r#"
[Fact]
public void TestSelectParam()
{
    var id = connection.QuerySingle<int>("select @id", new { id = 42 });
    Assert.Equal(42, id);
}

[Fact]
public void TestUpdate()
{
    connection.Execute("update t set x=@x", new { x = 1 });
    connection.Execute("insert t(x) values(@x)", new { x = 2 });
}
"#;

const GLOBAL_USINGS: &str =
    "global using System;\nglobal using System.Collections.Generic;\nglobal using System.Linq;\nglobal using Xunit;\n";

const ASSEMBLY_INFO: &str = r#"using System.Reflection;
using System.Runtime.InteropServices;

// General Information about an assembly is controlled through the following
// set of attributes. Change these attribute values to modify the information
// associated with an assembly.
[assembly: AssemblyTitle("Shop.Web")]
[assembly: AssemblyDescription("")]
[assembly: AssemblyCompany("Contoso")]
[assembly: AssemblyProduct("Shop.Web")]

// Setting ComVisible to false makes the types in this assembly not visible
// to COM components.  If you need to access a type in this assembly from
// COM, set the ComVisible attribute to true on that type.
[assembly: ComVisible(false)]
[assembly: Guid("2c1b1d5e-7b1e-4c1a-9d7e-0a4b5c6d7e8f")]
[assembly: AssemblyVersion("1.0.0.0")]
"#;

const VIEW_IMPORTS: &str =
    "@using Shop.Web\n@using Shop.Web.Models\n@addTagHelper *, Microsoft.AspNetCore.Mvc.TagHelpers\n";

const LAYOUT: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
    <meta charset="utf-8" />
    <title>@ViewData["Title"] - Shop</title>
    <link rel="stylesheet" href="~/css/site.css" asp-append-version="true" />
</head>
<body>
    <div class="container">
        <main role="main" class="pb-3">
            @RenderBody()
        </main>
    </div>
    @await RenderSectionAsync("Scripts", required: false)
</body>
</html>
"#;

const BLAZOR_PAGE: &str = r#"@page "/"

<PageTitle>Index</PageTitle>

<h1>Hello, world!</h1>

Welcome to your new app, which is the start of something that will grow.

<SurveyPrompt Title="How is Blazor working for you?" />
"#;

const TOP_LEVEL_PROGRAM: &str = r#"var builder = WebApplication.CreateBuilder(args);

// Add services to the container.
builder.Services.AddControllersWithViews();

var app = builder.Build();

// Configure the HTTP request pipeline.
if (!app.Environment.IsDevelopment())
{
    app.UseExceptionHandler("/Home/Error");
    // The default HSTS value is 30 days. You may want to change this for production scenarios.
    app.UseHsts();
}

app.UseHttpsRedirection();
app.UseStaticFiles();
app.UseRouting();
app.MapControllerRoute(
    name: "default",
    pattern: "{controller=Home}/{action=Index}/{id?}");

app.Run();
"#;

const JQUERY_INTELLISENSE: &str = r#"/// <reference path="jquery-1.4.1.js" />
/*!
 * Documentation for jQuery, for Visual Studio IntelliSense.
 */
(function (window, undefined) {
    var jQuery = function (selector, context) {
        /// <summary>
        ///     1: $(expression, context) - This function accepts a string containing a CSS selector.
        ///     2: $(html) - Create DOM elements on-the-fly from the provided String of raw HTML.
        /// </summary>
        /// <param name="selector" type="String">A string containing a selector expression</param>
        /// <param name="context" type="jQuery">A DOM Element, Document, or jQuery to use as context</param>
        /// <returns type="jQuery" />
        return new jQuery.fn.init(selector, context);
    };
    jQuery.fn.add = function (selector, context) {
        /// <summary>
        ///     Add elements to the set of matched elements.
        /// </summary>
        /// <param name="selector" type="String">A string containing a selector expression.</param>
        /// <returns type="jQuery" />
        return this.pushStack(jQuery.unique(jQuery.merge(this.get(), selector)));
    };
    window.jQuery = window.$ = jQuery;
})(window);
"#;

#[test]
fn lower_case_sql_without_from_is_embedded_sql() {
    assert_eq!(content(DAPPER_TESTS), Language::DotnetWithSql);
    assert_eq!(classify(DAPPER_TESTS, Some("Tests/ParamTests.cs")), Language::DotnetWithSql);
    for sql in ["select @id", "update t set x=@x", "insert t(x) values(@x)", "select @a as a, @b as b", "select 1"] {
        assert!(looks_like_sql_statement(sql), "{sql}");
    }
    for text in ["Select 2 items to compare.", "select an @mention", "Update t set"] {
        assert!(!looks_like_sql_statement(text), "{text}");
    }
}

#[test]
fn dotnet_files_with_little_csharp_syntax_are_dotnet() {
    for (name, text) in [
        ("GlobalUsings.cs", GLOBAL_USINGS),
        ("AssemblyInfo.cs", ASSEMBLY_INFO),
        ("_ViewImports.cshtml", VIEW_IMPORTS),
        ("_Layout.cshtml", LAYOUT),
        ("Index.razor", BLAZOR_PAGE),
        ("Program.cs", TOP_LEVEL_PROGRAM),
    ] {
        assert_eq!(content(text), Language::Dotnet, "{name}");
    }
}

#[test]
fn javascript_with_triple_slash_comments_is_not_dotnet() {
    assert_eq!(content(JQUERY_INTELLISENSE), Language::Unknown);
}
