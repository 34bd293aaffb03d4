namespace Invoicing.Services;

/// <summary>
/// Currency rounding shared by every computation in C#.
/// </summary>
/// <remarks>
/// Must match <c>dbo.fn_RoundCurrency</c>: 2 decimals, half away from zero. .NET's default
/// <see cref="Math.Round(decimal, int)"/> uses banker's rounding (half to even), which
/// differs from T-SQL's ROUND on exactly the cases that matter (0.125 -> 0.12 vs 0.13).
/// </remarks>
public static class Money
{
    public const int Decimals = 2;

    public static decimal Round(decimal amount) =>
        Math.Round(amount, Decimals, MidpointRounding.AwayFromZero);

    /// <summary>Formats an amount for display, e.g. <c>1 234,50 €</c> for fr-FR.</summary>
    public static string Format(decimal amount, string currencyCode, IFormatProvider? culture = null) =>
        string.Format(culture, "{0:N2} {1}", amount, currencyCode == "EUR" ? "€" : currencyCode);
}
