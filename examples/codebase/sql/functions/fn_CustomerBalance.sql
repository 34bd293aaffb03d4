-- dbo.fn_CustomerBalance: what a customer still owes us, over all issued invoices.
-- VOID and DRAFT invoices are excluded; refunds (negative payments) increase the balance.
CREATE OR ALTER FUNCTION dbo.fn_CustomerBalance (@CustomerId INT)
RETURNS DECIMAL(19, 2)
AS
BEGIN
    DECLARE @Invoiced DECIMAL(19, 2), @Paid DECIMAL(19, 2);

    SELECT @Invoiced = ISNULL(SUM(i.TotalAmount), 0)
    FROM   dbo.Invoices AS i
    WHERE  i.CustomerId = @CustomerId
      AND  i.Status IN ('ISSUED', 'PARTIALLY_PAID', 'PAID');

    SELECT @Paid = ISNULL(SUM(p.Amount), 0)
    FROM   dbo.Payments AS p
           INNER JOIN dbo.Invoices AS i ON i.InvoiceId = p.InvoiceId
    WHERE  i.CustomerId = @CustomerId
      AND  i.Status <> 'VOID';

    RETURN @Invoiced - @Paid;
END;
GO
