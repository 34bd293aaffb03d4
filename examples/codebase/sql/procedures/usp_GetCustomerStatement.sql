-- dbo.usp_GetCustomerStatement
-- Ledger of a customer between two dates with an opening balance and a running balance.
-- The running balance uses a window function; ties on the same date are ordered with
-- invoices before payments so that a same-day payment never shows a negative balance.
CREATE OR ALTER PROCEDURE dbo.usp_GetCustomerStatement
    @CustomerId INT,
    @From       DATE,
    @To         DATE
AS
BEGIN
    SET NOCOUNT ON;

    DECLARE @Opening DECIMAL(19, 2) =
    (
        SELECT ISNULL(SUM(Debit - Credit), 0)
        FROM   dbo.vw_CustomerStatement
        WHERE  CustomerId = @CustomerId
          AND  EntryDate  < @From
    );

    SELECT  EntryDate,
            Label,
            Debit,
            Credit,
            @Opening + SUM(Debit - Credit) OVER (ORDER BY EntryDate, CASE WHEN Debit > 0 THEN 0 ELSE 1 END
                                                 ROWS UNBOUNDED PRECEDING) AS Balance
    FROM    dbo.vw_CustomerStatement
    WHERE   CustomerId = @CustomerId
      AND   EntryDate BETWEEN @From AND @To
    ORDER BY EntryDate, CASE WHEN Debit > 0 THEN 0 ELSE 1 END;
END;
GO
