using Invoicing.Data.Repositories;
using Microsoft.Extensions.Logging;

namespace Invoicing.Services;

/// <summary>
/// Issues draft invoices. Before issuing, the in-memory total (what the user saw in the
/// preview) is compared with the database's; a difference means the two implementations
/// drifted apart, which we want to know about before a customer does.
/// </summary>
public sealed class InvoiceIssuer
{
    private readonly IInvoiceRepository _invoices;
    private readonly InvoiceTotalCalculator _calculator;
    private readonly ILogger<InvoiceIssuer> _logger;

    public InvoiceIssuer(IInvoiceRepository invoices, InvoiceTotalCalculator calculator, ILogger<InvoiceIssuer> logger)
    {
        _invoices = invoices;
        _calculator = calculator;
        _logger = logger;
    }

    public async Task<string> IssueAsync(int invoiceId, DateOnly? issueDate = null, CancellationToken ct = default)
    {
        var invoice = await _invoices.GetWithLinesAsync(invoiceId, ct)
                      ?? throw new KeyNotFoundException($"Invoice {invoiceId} not found.");

        if (!invoice.IsDraft)
        {
            throw new InvalidOperationException($"Invoice {invoice.InvoiceNumber} is already {invoice.Status}.");
        }

        if (invoice.Lines.Count == 0)
        {
            throw new InvalidOperationException("An invoice without lines cannot be issued.");
        }

        var preview = _calculator.Compute(invoice.Lines);
        var reference = await _invoices.ComputeTotalsAsync(invoiceId, persist: false, ct);

        if (preview.Total != reference.TotalAmount)
        {
            _logger.LogError(
                "Total mismatch on invoice {InvoiceId}: calculator {Preview} vs database {Reference}",
                invoiceId, preview.Total, reference.TotalAmount);
        }

        var number = await _invoices.IssueAsync(invoiceId, issueDate, ct);
        _logger.LogInformation("Invoice {InvoiceId} issued as {Number}, total {Total}", invoiceId, number, reference.TotalAmount);
        return number;
    }
}
