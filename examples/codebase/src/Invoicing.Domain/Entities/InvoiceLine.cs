namespace Invoicing.Domain.Entities;

/// <summary>One line of an invoice. Maps to <c>dbo.InvoiceLines</c>.</summary>
public class InvoiceLine
{
    public int InvoiceLineId { get; set; }

    public int InvoiceId { get; set; }

    public short LineNo { get; set; }

    public string? ProductCode { get; set; }

    public string Description { get; set; } = string.Empty;

    /// <summary>Up to 3 decimals (hours, kilograms).</summary>
    public decimal Quantity { get; set; }

    /// <summary>Up to 4 decimals; price lists per thousand units need them.</summary>
    public decimal UnitPrice { get; set; }

    public int? DiscountId { get; set; }

    public Discount? Discount { get; set; }

    public int TaxRateId { get; set; }

    public TaxRate TaxRate { get; set; } = null!;
}
