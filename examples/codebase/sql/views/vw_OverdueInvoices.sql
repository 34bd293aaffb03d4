/*  dbo.vw_OverdueInvoices -- feeds the dunning job (InvoiceReminderJob) and the
    "Overdue" tab of the back office. An invoice is overdue the day AFTER its due date. */
CREATE OR ALTER VIEW dbo.vw_OverdueInvoices
AS
SELECT  i.InvoiceId,
        i.InvoiceNumber,
        i.CustomerId,
        c.LegalName,
        c.Email,
        i.DueDate,
        DATEDIFF(DAY, i.DueDate, CAST(SYSUTCDATETIME() AS DATE))   AS DaysOverdue,
        i.TotalAmount - ISNULL(p.Paid, 0)                          AS AmountDue
FROM    dbo.Invoices AS i
        INNER JOIN dbo.Customers AS c ON c.CustomerId = i.CustomerId
        OUTER APPLY (SELECT SUM(Amount) AS Paid
                     FROM   dbo.Payments
                     WHERE  InvoiceId = i.InvoiceId) AS p
WHERE   i.Status IN ('ISSUED', 'PARTIALLY_PAID')
  AND   i.DueDate < CAST(SYSUTCDATETIME() AS DATE);
GO
