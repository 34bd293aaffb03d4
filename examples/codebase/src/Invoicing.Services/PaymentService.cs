using Invoicing.Data.Repositories;
using Invoicing.Domain.Entities;
using Microsoft.Extensions.Logging;

namespace Invoicing.Services;

/// <summary>
/// Records payments. The rules (no overpayment, only issued invoices) are enforced by
/// <c>dbo.usp_ApplyPayment</c> under a row lock; this service adds input validation and
/// logging, and translates the procedure's errors.
/// </summary>
public sealed class PaymentService
{
    private readonly PaymentRepository _payments;
    private readonly IInvoiceRepository _invoices;
    private readonly ILogger<PaymentService> _logger;

    public PaymentService(PaymentRepository payments, IInvoiceRepository invoices, ILogger<PaymentService> logger)
    {
        _payments = payments;
        _invoices = invoices;
        _logger = logger;
    }

    public async Task<PaymentResult> RecordAsync(int invoiceId, decimal amount, PaymentMethod method,
        string? reference, CancellationToken ct = default)
    {
        if (amount == 0m)
        {
            return PaymentResult.Rejected("The amount must not be zero.");
        }

        if (method == PaymentMethod.Refund && amount > 0m)
        {
            // Refunds are stored as negative amounts (CK_Payments_Amount).
            amount = -amount;
        }

        if (decimal.Round(amount, Money.Decimals) != amount)
        {
            return PaymentResult.Rejected($"The amount {amount} has more than {Money.Decimals} decimals.");
        }

        try
        {
            var paymentId = await _payments.ApplyAsync(invoiceId, amount, method, reference, paidAt: null, ct);
            _logger.LogInformation("Payment {PaymentId} of {Amount} recorded on invoice {InvoiceId} ({Method})",
                paymentId, amount, invoiceId, method);
            return PaymentResult.Accepted(paymentId);
        }
        catch (PaymentRejectedException ex)
        {
            _logger.LogWarning(ex, "Payment of {Amount} rejected on invoice {InvoiceId}", amount, invoiceId);
            return PaymentResult.Rejected(ex.Message);
        }
    }

    /// <summary>What is left to pay, from the frozen total and the payments recorded so far.</summary>
    public async Task<decimal> AmountDueAsync(int invoiceId, CancellationToken ct = default)
    {
        var invoice = await _invoices.GetWithLinesAsync(invoiceId, ct)
                      ?? throw new KeyNotFoundException($"Invoice {invoiceId} not found.");
        var paid = await _payments.TotalPaidAsync(invoiceId);
        return invoice.TotalAmount - paid;
    }
}

public sealed record PaymentResult(bool Success, int? PaymentId, string? Error)
{
    public static PaymentResult Accepted(int paymentId) => new(true, paymentId, null);
    public static PaymentResult Rejected(string error) => new(false, null, error);
}
