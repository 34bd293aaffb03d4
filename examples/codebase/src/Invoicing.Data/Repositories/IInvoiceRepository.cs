using Invoicing.Domain.Entities;

namespace Invoicing.Data.Repositories;

public interface IInvoiceRepository
{
    Task<Invoice?> GetWithLinesAsync(int invoiceId, CancellationToken ct = default);

    Task<InvoiceTotals> ComputeTotalsAsync(int invoiceId, bool persist, CancellationToken ct = default);

    Task<IReadOnlyList<int>> FindDriftedAsync(CancellationToken ct = default);

    /// <summary>Issues a draft and returns its new number.</summary>
    Task<string> IssueAsync(int invoiceId, DateOnly? issueDate, CancellationToken ct = default);
}
