using System.Data;
using Dapper;
using Invoicing.Domain.Entities;
using Microsoft.Data.SqlClient;

namespace Invoicing.Data.Repositories;

/// <summary>
/// Dapper access to invoices for the hot paths (invoice page, PDF rendering).
/// The queries are hand-written and mirror the views in <c>sql/views</c>.
/// </summary>
public sealed class InvoiceRepository : IInvoiceRepository
{
    private readonly string _connectionString;

    public InvoiceRepository(string connectionString)
    {
        _connectionString = connectionString ?? throw new ArgumentNullException(nameof(connectionString));
    }

    #region Queries

    private const string SelectInvoiceWithLines = @"
SELECT i.InvoiceId, i.InvoiceNumber, i.CustomerId, i.Status, i.CurrencyCode,
       i.IssueDate, i.DueDate, i.SubtotalAmount, i.DiscountAmount, i.TaxAmount, i.TotalAmount
FROM   dbo.Invoices AS i
WHERE  i.InvoiceId = @InvoiceId;

SELECT l.InvoiceLineId, l.InvoiceId, l.LineNo, l.ProductCode, l.Description,
       l.Quantity, l.UnitPrice, l.DiscountId, l.TaxRateId,
       d.DiscountId, d.Code, d.Kind, d.Value,
       t.TaxRateId, t.Code, t.Rate
FROM   dbo.InvoiceLines AS l
       LEFT  JOIN dbo.Discounts AS d ON d.DiscountId = l.DiscountId
       INNER JOIN dbo.TaxRates  AS t ON t.TaxRateId  = l.TaxRateId
WHERE  l.InvoiceId = @InvoiceId
ORDER BY l.LineNo;";

    #endregion

    /// <summary>Loads an invoice with its lines, their discount and tax rate.</summary>
    public async Task<Invoice?> GetWithLinesAsync(int invoiceId, CancellationToken ct = default)
    {
        await using var connection = new SqlConnection(_connectionString);
        using var grid = await connection.QueryMultipleAsync(
            new CommandDefinition(SelectInvoiceWithLines, new { InvoiceId = invoiceId }, cancellationToken: ct));

        var invoice = await grid.ReadSingleOrDefaultAsync<Invoice>();
        if (invoice is null)
        {
            return null;
        }

        // Multi-mapping: the line, then its discount (may be null), then its tax rate.
        var lines = grid.Read<InvoiceLine, Discount, TaxRate, InvoiceLine>(
            (line, discount, taxRate) =>
            {
                line.Discount = discount;
                line.TaxRate = taxRate;
                return line;
            },
            splitOn: "DiscountId,TaxRateId");

        invoice.Lines = lines.ToList();
        return invoice;
    }

    /// <summary>
    /// Recomputes the totals in the database (the reference implementation) and, for a
    /// draft, stores them. Returns the invoice-level amounts.
    /// </summary>
    public async Task<InvoiceTotals> ComputeTotalsAsync(int invoiceId, bool persist, CancellationToken ct = default)
    {
        await using var connection = new SqlConnection(_connectionString);
        using var grid = await connection.QueryMultipleAsync(new CommandDefinition(
            "dbo.usp_ComputeInvoiceTotal",
            new { InvoiceId = invoiceId, Persist = persist },
            commandType: CommandType.StoredProcedure,
            cancellationToken: ct));

        var perRate = (await grid.ReadAsync<TaxBreakdown>()).ToList();
        var totals = await grid.ReadSingleAsync<InvoiceTotals>();
        return totals with { PerRate = perRate };
    }

    /// <summary>Invoices whose cached total differs from the recomputed one.</summary>
    public async Task<IReadOnlyList<int>> FindDriftedAsync(CancellationToken ct = default)
    {
        await using var connection = new SqlConnection(_connectionString);
        var ids = await connection.QueryAsync<int>(new CommandDefinition(
            "SELECT InvoiceId FROM dbo.vw_InvoiceTotals WHERE HasDrift = 1 ORDER BY InvoiceId",
            cancellationToken: ct));
        return ids.AsList();
    }

    public async Task<string> IssueAsync(int invoiceId, DateOnly? issueDate, CancellationToken ct = default)
    {
        await using var connection = new SqlConnection(_connectionString);
        await connection.ExecuteAsync(new CommandDefinition(
            "dbo.usp_IssueInvoice",
            new { InvoiceId = invoiceId, IssueDate = issueDate?.ToDateTime(TimeOnly.MinValue) },
            commandType: CommandType.StoredProcedure,
            cancellationToken: ct));

        return await connection.ExecuteScalarAsync<string>(
            "SELECT InvoiceNumber FROM dbo.Invoices WHERE InvoiceId = @invoiceId", new { invoiceId })
            ?? throw new InvalidOperationException($"Invoice {invoiceId} was issued without a number.");
    }
}

public sealed record TaxBreakdown(string TaxCode, decimal TaxRate, decimal NetAmount, decimal TaxAmount);

public sealed record InvoiceTotals(decimal SubtotalAmount, decimal DiscountAmount, decimal TaxAmount, decimal TotalAmount)
{
    public IReadOnlyList<TaxBreakdown> PerRate { get; init; } = Array.Empty<TaxBreakdown>();
}
