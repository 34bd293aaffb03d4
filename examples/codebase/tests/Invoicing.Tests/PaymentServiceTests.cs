using Invoicing.Data.Repositories;
using Invoicing.Domain.Entities;
using Invoicing.Services;
using Microsoft.Extensions.Logging.Abstractions;
using Xunit;

namespace Invoicing.Tests;

/// <summary>
/// Validation done before the database is reached. The procedure's own rules
/// (overpayment, status) are covered by the SQL integration tests.
/// </summary>
public class PaymentServiceTests
{
    // The repository is never called for rejected input, so an unreachable connection string is fine.
    private readonly PaymentService _service = new(
        new PaymentRepository("Server=unreachable;Database=none;Connect Timeout=1"),
        new InvoiceRepository("Server=unreachable;Database=none;Connect Timeout=1"),
        NullLogger<PaymentService>.Instance);

    [Fact]
    public async Task Zero_amount_is_rejected()
    {
        var result = await _service.RecordAsync(1, 0m, PaymentMethod.Transfer, reference: null);

        Assert.False(result.Success);
        Assert.Equal("The amount must not be zero.", result.Error);
    }

    [Fact]
    public async Task More_than_two_decimals_is_rejected()
    {
        var result = await _service.RecordAsync(1, 10.005m, PaymentMethod.Card, "AUTH-1");

        Assert.False(result.Success);
        Assert.Contains("more than 2 decimals", result.Error);
    }
}
