using System.Data;
using Dapper;
using Invoicing.Domain.Entities;
using Microsoft.Data.SqlClient;

namespace Invoicing.Data.Repositories;

/// <summary>Payments go through <c>dbo.usp_ApplyPayment</c>, which holds the invoice row lock.</summary>
public sealed class PaymentRepository
{
    private readonly string _connectionString;

    public PaymentRepository(string connectionString) => _connectionString = connectionString;

    public async Task<int> ApplyAsync(int invoiceId, decimal amount, PaymentMethod method, string? reference,
        DateTime? paidAt, CancellationToken ct = default)
    {
        var parameters = new DynamicParameters();
        parameters.Add("@InvoiceId", invoiceId);
        parameters.Add("@Amount", amount, DbType.Decimal, precision: 19, scale: 2);
        parameters.Add("@Method", method.ToString().ToUpperInvariant(), DbType.AnsiString, size: 16);
        parameters.Add("@Reference", reference);
        parameters.Add("@PaidAt", paidAt);
        parameters.Add("@PaymentId", dbType: DbType.Int32, direction: ParameterDirection.Output);

        await using var connection = new SqlConnection(_connectionString);
        try
        {
            await connection.ExecuteAsync(new CommandDefinition(
                "dbo.usp_ApplyPayment", parameters, commandType: CommandType.StoredProcedure, cancellationToken: ct));
        }
        catch (SqlException ex) when (ex.Number is 50020 or 50021)
        {
            // Business rule violations raised by the procedure (THROW 50020/50021).
            throw new PaymentRejectedException(ex.Message, ex);
        }

        return parameters.Get<int>("@PaymentId");
    }

    public async Task<IReadOnlyList<Payment>> ListForInvoiceAsync(int invoiceId, CancellationToken ct = default)
    {
        // Raw string literal: the SQL is pasted as-is from SSMS, quotes included.
        const string sql = """
            SELECT p.PaymentId, p.InvoiceId, p.PaidAt, p.Amount,
                   p.Method, p.Reference, p.CreatedBy
            FROM   dbo.Payments AS p
            WHERE  p.InvoiceId = @invoiceId
              AND  p.Method <> 'REFUND' -- refunds are listed separately
            ORDER BY p.PaidAt;
            """;

        await using var connection = new SqlConnection(_connectionString);
        var rows = await connection.QueryAsync<Payment>(new CommandDefinition(sql, new { invoiceId }, cancellationToken: ct));
        return rows.AsList();
    }

    public async Task<decimal> TotalPaidAsync(int invoiceId)
    {
        await using var connection = new SqlConnection(_connectionString);
        return await connection.ExecuteScalarAsync<decimal>(
            "SELECT ISNULL(SUM(Amount), 0) FROM dbo.Payments WHERE InvoiceId = @invoiceId",
            new { invoiceId });
    }
}

public sealed class PaymentRejectedException : Exception
{
    public PaymentRejectedException(string message, Exception inner) : base(message, inner) { }
}
