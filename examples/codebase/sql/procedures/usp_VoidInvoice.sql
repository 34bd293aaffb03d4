/*
    dbo.usp_VoidInvoice -- cancels an invoice.
    A DRAFT is simply voided. An ISSUED invoice with no payment is voided and a
    credit note (negative invoice with the same lines) is created, as the law
    requires; an invoice with payments cannot be voided.
*/
CREATE OR ALTER PROCEDURE dbo.usp_VoidInvoice
    @InvoiceId      INT,
    @Reason         NVARCHAR(400),
    @CreditNoteId   INT = NULL OUTPUT
AS
BEGIN
    SET NOCOUNT ON;
    SET XACT_ABORT ON;

    IF EXISTS (SELECT 1 FROM dbo.Payments WHERE InvoiceId = @InvoiceId)
        THROW 50030, N'An invoice with payments cannot be voided; issue a refund instead.', 1;

    BEGIN TRANSACTION;

    DECLARE @Status VARCHAR(16);
    SELECT @Status = Status FROM dbo.Invoices WITH (UPDLOCK) WHERE InvoiceId = @InvoiceId;

    IF @Status = 'ISSUED'
    BEGIN
        INSERT INTO dbo.Invoices (CustomerId, Status, CurrencyCode, Notes)
        SELECT CustomerId, 'DRAFT', CurrencyCode, CONCAT(N'Credit note for ', InvoiceNumber, N': ', @Reason)
        FROM   dbo.Invoices
        WHERE  InvoiceId = @InvoiceId;

        SET @CreditNoteId = SCOPE_IDENTITY();

        -- Same lines with a negated quantity: the totals come out negative.
        INSERT INTO dbo.InvoiceLines (InvoiceId, LineNo, ProductCode, Description, Quantity, UnitPrice, DiscountId, TaxRateId)
        SELECT @CreditNoteId, LineNo, ProductCode, Description, -Quantity, UnitPrice, DiscountId, TaxRateId
        FROM   dbo.InvoiceLines
        WHERE  InvoiceId = @InvoiceId;
    END;

    UPDATE dbo.Invoices
    SET    Status = 'VOID',
           Notes  = CONCAT(Notes, CHAR(13) + CHAR(10), N'Voided: ', @Reason)
    WHERE  InvoiceId = @InvoiceId
      AND  Status IN ('DRAFT', 'ISSUED');

    COMMIT TRANSACTION;
END;
GO
