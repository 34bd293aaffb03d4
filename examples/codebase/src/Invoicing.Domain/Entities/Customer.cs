namespace Invoicing.Domain.Entities;

/// <summary>
/// A legal entity we invoice. Maps to <c>dbo.Customers</c>.
/// </summary>
public class Customer
{
    public int CustomerId { get; set; }

    /// <summary>Public number printed on invoices, e.g. <c>C-000123</c>.</summary>
    public string CustomerNumber { get; set; } = string.Empty;

    public string LegalName { get; set; } = string.Empty;

    public string? Email { get; set; }

    /// <summary>ISO 3166-1 alpha-2 country code.</summary>
    public string CountryCode { get; set; } = "FR";

    /// <summary>Intra-community VAT number; <c>null</c> for consumers.</summary>
    public string? VatNumber { get; set; }

    public short PaymentTermsDays { get; set; } = 30;

    public int? DefaultDiscountId { get; set; }

    public Discount? DefaultDiscount { get; set; }

    public bool IsActive { get; set; } = true;

    public DateTime CreatedAt { get; set; }

    public List<Invoice> Invoices { get; set; } = new();
}
