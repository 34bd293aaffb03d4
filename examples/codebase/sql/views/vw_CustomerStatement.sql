-- dbo.vw_CustomerStatement: invoices and payments as one ledger, for the PDF statement.
CREATE OR ALTER VIEW dbo.vw_CustomerStatement
AS
SELECT  i.CustomerId,
        i.IssueDate                 AS EntryDate,
        N'Invoice ' + i.InvoiceNumber AS Label,
        i.TotalAmount               AS Debit,
        CAST(0 AS DECIMAL(19, 2))   AS Credit
FROM    dbo.Invoices AS i
WHERE   i.Status IN ('ISSUED', 'PARTIALLY_PAID', 'PAID')

UNION ALL

SELECT  i.CustomerId,
        CAST(p.PaidAt AS DATE),
        CASE p.Method WHEN 'REFUND' THEN N'Refund ' ELSE N'Payment ' END + ISNULL(p.Reference, N'[no reference]'),
        CASE WHEN p.Amount < 0 THEN -p.Amount ELSE 0 END,
        CASE WHEN p.Amount > 0 THEN p.Amount ELSE 0 END
FROM    dbo.Payments AS p
        INNER JOIN dbo.Invoices AS i ON i.InvoiceId = p.InvoiceId;
GO
