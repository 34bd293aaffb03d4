using Invoicing.Domain.Entities;
using Invoicing.Services;
using Xunit;

namespace Invoicing.Tests;

public class InvoiceTotalCalculatorTests
{
    private static readonly TaxRate Standard = new() { TaxRateId = 1, Code = "STD", Rate = 0.2000m };
    private static readonly TaxRate Reduced = new() { TaxRateId = 3, Code = "RED", Rate = 0.0550m };

    private readonly InvoiceTotalCalculator _calculator = new();

    private static InvoiceLine Line(short no, decimal qty, decimal price, TaxRate rate, Discount? discount = null) =>
        new()
        {
            LineNo = no,
            Description = $"Line {no}",
            Quantity = qty,
            UnitPrice = price,
            TaxRate = rate,
            TaxRateId = rate.TaxRateId,
            Discount = discount,
        };

    [Fact]
    public void Single_line_without_discount()
    {
        var totals = _calculator.Compute(new[] { Line(1, 3m, 19.99m, Standard) });

        Assert.Equal(59.97m, totals.Subtotal);
        Assert.Equal(0m, totals.Discount);
        Assert.Equal(11.99m, totals.Tax);     // 59.97 * 0.2 = 11.994
        Assert.Equal(71.96m, totals.Total);
    }

    [Fact]
    public void Percentage_discount_is_rounded_per_line()
    {
        var tenPercent = new Discount { Kind = DiscountKind.Percentage, Value = 10m };
        var totals = _calculator.Compute(new[] { Line(1, 1m, 0.25m, Standard, tenPercent) });

        // 0.25 * 10 % = 0.025 -> 0.03 (half away from zero, like T-SQL ROUND)
        Assert.Equal(0.03m, totals.Discount);
        Assert.Equal(0.22m + 0.04m, totals.Total);
    }

    [Fact]
    public void Fixed_discount_never_makes_a_line_negative()
    {
        var voucher = new Discount { Kind = DiscountKind.Amount, Value = 50m };
        var amounts = InvoiceTotalCalculator.ComputeLine(Line(1, 2m, 10m, Standard, voucher));

        Assert.Equal(20m, amounts.Discount);
        Assert.Equal(0m, amounts.Net);
    }

    [Fact]
    public void Tax_is_rounded_once_per_rate_not_per_line()
    {
        // Three lines of 0.05 at 5.5 %: per line 0.00275 -> 0.00 each, per rate 0.15 * 5.5 % = 0.00825 -> 0.01.
        var lines = new[]
        {
            Line(1, 1m, 0.05m, Reduced),
            Line(2, 1m, 0.05m, Reduced),
            Line(3, 1m, 0.05m, Reduced),
        };

        var totals = _calculator.Compute(lines);

        Assert.Single(totals.PerRate);
        Assert.Equal(0.01m, totals.Tax);
        Assert.Equal(0.16m, totals.Total);
    }

    [Theory]
    [InlineData(0.125, 0.13)]
    [InlineData(-0.125, -0.13)]
    [InlineData(2.675, 2.68)]
    public void Money_rounds_half_away_from_zero(decimal amount, decimal expected)
    {
        Assert.Equal(expected, Money.Round(amount));
    }

    [Fact]
    public void Missing_tax_rate_is_reported_with_the_line_number()
    {
        var line = new InvoiceLine { LineNo = 7, Quantity = 1m, UnitPrice = 1m, TaxRate = null! };

        var ex = Assert.Throws<InvalidOperationException>(() => _calculator.Compute(new[] { line }));
        Assert.Contains("Line 7", ex.Message);
    }
}
