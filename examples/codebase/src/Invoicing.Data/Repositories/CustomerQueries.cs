using Invoicing.Domain.Entities;
using Microsoft.EntityFrameworkCore;

namespace Invoicing.Data.Repositories;

/// <summary>Back-office queries, written with LINQ over <see cref="InvoicingDbContext"/>.</summary>
public sealed class CustomerQueries
{
    private readonly InvoicingDbContext _db;

    public CustomerQueries(InvoicingDbContext db) => _db = db;

    public Task<Customer?> FindByNumberAsync(string customerNumber, CancellationToken ct = default) =>
        _db.Customers
           .AsNoTracking()
           .Include(c => c.DefaultDiscount)
           .SingleOrDefaultAsync(c => c.CustomerNumber == customerNumber, ct);

    /// <summary>Top customers by invoiced amount over a period (issued and paid invoices only).</summary>
    public async Task<IReadOnlyList<CustomerRevenue>> TopCustomersAsync(DateOnly from, DateOnly to, int take,
        CancellationToken ct = default)
    {
        var query =
            from i in _db.Invoices.AsNoTracking()
            where i.Status != InvoiceStatus.Draft && i.Status != InvoiceStatus.Void
                  && i.IssueDate >= from && i.IssueDate <= to
            group i by new { i.CustomerId, i.Customer.LegalName } into g
            orderby g.Sum(x => x.TotalAmount) descending
            select new CustomerRevenue(g.Key.CustomerId, g.Key.LegalName, g.Count(), g.Sum(x => x.TotalAmount));

        return await query.Take(take).ToListAsync(ct);
    }

    /// <summary>Customers with at least one overdue invoice, with what they owe.</summary>
    public async Task<List<OverdueCustomer>> OverdueAsync(DateOnly today, CancellationToken ct = default)
    {
        return await _db.Invoices
            .Where(i => (i.Status == InvoiceStatus.Issued || i.Status == InvoiceStatus.PartiallyPaid)
                        && i.DueDate < today)
            .GroupBy(i => new { i.CustomerId, i.Customer.LegalName, i.Customer.Email })
            .Select(g => new OverdueCustomer(
                g.Key.CustomerId,
                g.Key.LegalName,
                g.Key.Email,
                g.Sum(i => i.TotalAmount - i.Payments.Sum(p => p.Amount)),
                g.Min(i => i.DueDate!.Value)))
            .OrderByDescending(x => x.AmountDue)
            .ToListAsync(ct);
    }

    /// <summary>
    /// Statement lines come from a stored procedure; EF maps them with FromSql, which
    /// parameterizes the interpolated values (this is NOT string concatenation).
    /// </summary>
    public Task<List<StatementLine>> StatementAsync(int customerId, DateOnly from, DateOnly to,
        CancellationToken ct = default) =>
        _db.Database
           .SqlQuery<StatementLine>($"EXEC dbo.usp_GetCustomerStatement @CustomerId = {customerId}, @From = {from}, @To = {to}")
           .ToListAsync(ct);
}

public sealed record CustomerRevenue(int CustomerId, string LegalName, int InvoiceCount, decimal Revenue);

public sealed record OverdueCustomer(int CustomerId, string LegalName, string? Email, decimal AmountDue, DateOnly OldestDueDate);

public sealed record StatementLine(DateOnly EntryDate, string Label, decimal Debit, decimal Credit, decimal Balance);
