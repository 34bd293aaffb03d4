using System.ComponentModel.DataAnnotations;

namespace Invoicing.Domain.Entities;

/// <summary>
/// Header of an invoice. Maps to <c>dbo.Invoices</c>.
/// </summary>
/// <remarks>
/// The amount properties are the totals frozen when the invoice was issued. For a draft
/// they are recomputed by <c>InvoiceTotalCalculator</c> (preview) and by
/// <c>dbo.usp_ComputeInvoiceTotal</c> (persisted).
/// </remarks>
public class Invoice
{
    public int InvoiceId { get; set; }

    /// <summary>Assigned on issue (<c>INV-2024-000042</c>); <c>null</c> for drafts.</summary>
    [MaxLength(20)]
    public string? InvoiceNumber { get; set; }

    public int CustomerId { get; set; }

    public Customer Customer { get; set; } = null!;

    public InvoiceStatus Status { get; set; } = InvoiceStatus.Draft;

    [StringLength(3, MinimumLength = 3)]
    public string CurrencyCode { get; set; } = "EUR";

    public DateOnly? IssueDate { get; set; }

    public DateOnly? DueDate { get; set; }

    public decimal SubtotalAmount { get; set; }

    public decimal DiscountAmount { get; set; }

    public decimal TaxAmount { get; set; }

    public decimal TotalAmount { get; set; }

    public string? Notes { get; set; }

    public DateTime CreatedAt { get; set; }

    /// <summary>Optimistic concurrency token (<c>ROWVERSION</c>).</summary>
    [Timestamp]
    public byte[] RowVersion { get; set; } = Array.Empty<byte>();

    public List<InvoiceLine> Lines { get; set; } = new();

    public List<Payment> Payments { get; set; } = new();

    public bool IsDraft => Status == InvoiceStatus.Draft;

    /// <summary>What the customer still owes; refunds (negative payments) increase it.</summary>
    public decimal AmountDue => TotalAmount - Payments.Sum(p => p.Amount);
}

public enum InvoiceStatus
{
    Draft,
    Issued,
    PartiallyPaid,
    Paid,
    Void,
}
