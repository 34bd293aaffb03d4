namespace Invoicing.Domain.Entities;

/// <summary>
/// A VAT rate valid over a period. Maps to <c>dbo.TaxRates</c>.
/// </summary>
public class TaxRate
{
    public int TaxRateId { get; set; }

    /// <summary><c>STD</c>, <c>INT</c>, <c>RED</c>, <c>SUPER_RED</c> or <c>ZERO</c>.</summary>
    public string Code { get; set; } = string.Empty;

    public string Description { get; set; } = string.Empty;

    /// <summary>A fraction: <c>0.2000m</c> is 20 %.</summary>
    public decimal Rate { get; set; }

    public DateOnly ValidFrom { get; set; }

    public DateOnly? ValidTo { get; set; }

    public bool IsValidOn(DateOnly date) =>
        ValidFrom <= date && (ValidTo is null || ValidTo > date);
}
