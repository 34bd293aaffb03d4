namespace Invoicing.Domain.Entities;

public enum PaymentMethod
{
    Transfer,
    Card,
    Cheque,
    Cash,

    /// <summary>Money paid back to the customer; the amount is negative.</summary>
    Refund,
}

/// <summary>Money received (or refunded) against an invoice. Maps to <c>dbo.Payments</c>.</summary>
public class Payment
{
    public int PaymentId { get; set; }

    public int InvoiceId { get; set; }

    public DateTime PaidAt { get; set; }

    public decimal Amount { get; set; }

    public PaymentMethod Method { get; set; }

    /// <summary>Bank reference or card authorisation code.</summary>
    public string? Reference { get; set; }

    public string CreatedBy { get; set; } = string.Empty;
}
