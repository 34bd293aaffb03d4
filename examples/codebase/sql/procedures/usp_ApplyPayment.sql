/*
    dbo.usp_ApplyPayment

    Records a payment and moves the invoice to PARTIALLY_PAID or PAID.
    Overpayments are refused: the customer's bank must be asked to split the
    transfer, or the surplus is refunded separately.
*/
CREATE OR ALTER PROCEDURE dbo.usp_ApplyPayment
    @InvoiceId  INT,
    @Amount     DECIMAL(19, 2),
    @Method     VARCHAR(16),
    @Reference  NVARCHAR(64) = NULL,
    @PaidAt     DATETIME2(0) = NULL,
    @PaymentId  INT          = NULL OUTPUT
AS
BEGIN
    SET NOCOUNT ON;
    SET XACT_ABORT ON;

    BEGIN TRANSACTION;

    DECLARE @Total DECIMAL(19, 2),
            @Paid  DECIMAL(19, 2),
            @Status VARCHAR(16);

    SELECT @Total  = i.TotalAmount,
           @Status = i.Status
    FROM   dbo.Invoices AS i WITH (UPDLOCK, ROWLOCK)
    WHERE  i.InvoiceId = @InvoiceId;

    IF @Status NOT IN ('ISSUED', 'PARTIALLY_PAID')
    BEGIN
        ROLLBACK TRANSACTION;
        THROW 50020, N'Payments can only be applied to issued, unpaid invoices.', 1;
    END;

    SELECT @Paid = ISNULL(SUM(Amount), 0)
    FROM   dbo.Payments
    WHERE  InvoiceId = @InvoiceId;

    IF @Paid + @Amount > @Total
    BEGIN
        ROLLBACK TRANSACTION;
        THROW 50021, N'Payment exceeds the amount due (overpayment).', 1;
    END;

    INSERT INTO dbo.Payments (InvoiceId, PaidAt, Amount, Method, Reference)
    VALUES (@InvoiceId, ISNULL(@PaidAt, SYSUTCDATETIME()), @Amount, @Method, @Reference);

    SET @PaymentId = SCOPE_IDENTITY();

    UPDATE dbo.Invoices
    SET    Status = CASE WHEN @Paid + @Amount = @Total THEN 'PAID' ELSE 'PARTIALLY_PAID' END
    WHERE  InvoiceId = @InvoiceId;

    COMMIT TRANSACTION;
END;
GO
