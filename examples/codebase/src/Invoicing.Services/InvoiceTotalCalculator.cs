using Invoicing.Domain.Entities;

namespace Invoicing.Services;

/// <summary>
/// Computes the totals of an invoice in memory, for the live preview while a draft is
/// edited. The database (<c>dbo.usp_ComputeInvoiceTotal</c>) remains the reference: when an
/// invoice is issued the totals are recomputed there and frozen.
/// </summary>
/// <remarks>
/// The algorithm, identical to the stored procedure:
/// <list type="number">
///   <item>per line: gross = round(quantity × unit price); discount = percentage of gross
///   (rounded) or a fixed amount capped at gross; net = gross − discount;</item>
///   <item>per tax rate: tax = round(Σ net × rate) — rounded once per rate, not per line;</item>
///   <item>invoice: subtotal = Σ gross, discount = Σ discount, tax = Σ tax per rate,
///   total = Σ net + tax.</item>
/// </list>
/// </remarks>
public sealed class InvoiceTotalCalculator
{
    public InvoiceTotalsResult Compute(IEnumerable<InvoiceLine> lines)
    {
        ArgumentNullException.ThrowIfNull(lines);

        var computed = lines.Select(ComputeLine).ToList();

        // Tax is rounded per rate: summing already-rounded per-line taxes can be off by a
        // cent per line, which the accounting export rejects.
        var perRate = computed
            .GroupBy(l => (l.TaxRateId, l.TaxCode, l.TaxRate))
            .Select(g =>
            {
                var net = g.Sum(l => l.Net);
                return new TaxLine(g.Key.TaxCode, g.Key.TaxRate, net, Money.Round(net * g.Key.TaxRate));
            })
            .OrderByDescending(t => t.Rate)
            .ToList();

        var subtotal = computed.Sum(l => l.Gross);
        var discount = computed.Sum(l => l.Discount);
        var tax = perRate.Sum(t => t.Tax);
        var total = subtotal - discount + tax;

        return new InvoiceTotalsResult(subtotal, discount, tax, total, perRate);
    }

    /// <summary>Gross, discount and net of one line. Public for the line editor's tooltip.</summary>
    public static LineAmounts ComputeLine(InvoiceLine line)
    {
        if (line.TaxRate is null)
        {
            throw new InvalidOperationException(
                $"Line {line.LineNo} has no tax rate loaded; include InvoiceLine.TaxRate in the query.");
        }

        var gross = Money.Round(line.Quantity * line.UnitPrice);

        var discount = line.Discount switch
        {
            null => 0m,
            { Kind: DiscountKind.Percentage } d => Money.Round(gross * d.Value / 100m),
            // A fixed amount never makes the line negative.
            { Kind: DiscountKind.Amount } d => Math.Min(d.Value, gross),
            _ => throw new NotSupportedException($"Unknown discount kind '{line.Discount.Kind}'."),
        };

        return new LineAmounts(line.TaxRateId, line.TaxRate.Code, line.TaxRate.Rate, gross, discount, gross - discount);
    }
}

public readonly record struct LineAmounts(
    int TaxRateId, string TaxCode, decimal TaxRate, decimal Gross, decimal Discount, decimal Net);

public sealed record TaxLine(string Code, decimal Rate, decimal Net, decimal Tax);

public sealed record InvoiceTotalsResult(
    decimal Subtotal, decimal Discount, decimal Tax, decimal Total, IReadOnlyList<TaxLine> PerRate);
