-- V004: PARTIALLY_PAID status and refunds.

SET XACT_ABORT ON;
BEGIN TRANSACTION;

ALTER TABLE dbo.Invoices DROP CONSTRAINT CK_Invoices_Status;

ALTER TABLE dbo.Invoices
    ADD CONSTRAINT CK_Invoices_Status
    CHECK (Status IN ('DRAFT', 'ISSUED', 'PARTIALLY_PAID', 'PAID', 'VOID'));

ALTER TABLE dbo.Payments DROP CONSTRAINT CK_Payments_Method;

ALTER TABLE dbo.Payments
    ADD CONSTRAINT CK_Payments_Method
    CHECK (Method IN ('TRANSFER', 'CARD', 'CHEQUE', 'CASH', 'REFUND'));

-- Invoices that already received part of their amount move to the new status.
UPDATE i
SET    i.Status = 'PARTIALLY_PAID'
FROM   dbo.Invoices AS i
       CROSS APPLY (SELECT SUM(p.Amount) AS Paid
                    FROM   dbo.Payments AS p
                    WHERE  p.InvoiceId = i.InvoiceId) AS paid
WHERE  i.Status = 'ISSUED'
  AND  paid.Paid > 0
  AND  paid.Paid < i.TotalAmount;

COMMIT TRANSACTION;
GO
