namespace Invoicing.Domain.Entities;

public enum DiscountKind
{
    /// <summary><see cref="Discount.Value"/> is a percentage (12.5 means 12.5 %).</summary>
    Percentage = 'P',

    /// <summary><see cref="Discount.Value"/> is a fixed amount per line, in invoice currency.</summary>
    Amount = 'A',
}

/// <summary>A discount that can be attached to invoice lines. Maps to <c>dbo.Discounts</c>.</summary>
public class Discount
{
    public int DiscountId { get; set; }

    public string Code { get; set; } = string.Empty;

    public string? Description { get; set; }

    public DiscountKind Kind { get; set; }

    public decimal Value { get; set; }

    public DateOnly ValidFrom { get; set; }

    public DateOnly? ValidTo { get; set; }

    public bool IsActive { get; set; } = true;
}
