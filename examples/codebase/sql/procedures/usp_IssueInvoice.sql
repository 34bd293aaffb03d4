/*
    dbo.usp_IssueInvoice

    Turns a DRAFT invoice into an ISSUED one: recomputes and freezes the totals,
    assigns the next number of the year ('INV-2024-000042') and the due date from
    the customer's payment terms. Numbers are gapless, which the law requires, so
    the sequence is read and incremented under an exclusive lock.
*/
CREATE OR ALTER PROCEDURE dbo.usp_IssueInvoice
    @InvoiceId  INT,
    @IssueDate  DATE = NULL
AS
BEGIN
    SET NOCOUNT ON;
    SET XACT_ABORT ON;

    SET @IssueDate = ISNULL(@IssueDate, CAST(SYSUTCDATETIME() AS DATE));

    BEGIN TRY
        BEGIN TRANSACTION;

        -- Freeze the totals first: usp_ComputeInvoiceTotal refuses non-draft invoices.
        EXEC dbo.usp_ComputeInvoiceTotal @InvoiceId = @InvoiceId, @Persist = 1;

        DECLARE @Year INT = YEAR(@IssueDate),
                @Next INT;

        UPDATE dbo.InvoiceNumberSequences WITH (UPDLOCK, HOLDLOCK)
        SET    @Next = LastNumber = LastNumber + 1
        WHERE  [Year] = @Year;

        IF @@ROWCOUNT = 0
        BEGIN
            INSERT INTO dbo.InvoiceNumberSequences ([Year], LastNumber) VALUES (@Year, 1);
            SET @Next = 1;
        END;

        UPDATE i
        SET    i.Status        = 'ISSUED',
               i.InvoiceNumber = CONCAT(N'INV-', @Year, N'-', RIGHT(CONCAT(N'000000', @Next), 6)),
               i.IssueDate     = @IssueDate,
               i.DueDate       = DATEADD(DAY, c.PaymentTermsDays, @IssueDate)
        FROM   dbo.Invoices AS i
               INNER JOIN dbo.Customers AS c ON c.CustomerId = i.CustomerId
        WHERE  i.InvoiceId = @InvoiceId
          AND  i.Status    = 'DRAFT';

        IF @@ROWCOUNT <> 1
            THROW 50010, N'Invoice is not a draft any more; nothing was issued.', 1;

        COMMIT TRANSACTION;
    END TRY
    BEGIN CATCH
        IF @@TRANCOUNT > 0
            ROLLBACK TRANSACTION;
        THROW;
    END CATCH;
END;
GO
