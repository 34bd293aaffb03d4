-- V002: per-line discounts.
--
-- Until this release a discount could only be set on the customer and applied to the
-- whole invoice subtotal. Finance asked for line-level discounts so that a promotional
-- price on one product does not reduce the others. We copy the customer's discount onto
-- every existing DRAFT line so that drafts keep the same total after the upgrade.

SET XACT_ABORT ON;
BEGIN TRANSACTION;

IF COL_LENGTH(N'dbo.InvoiceLines', N'DiscountId') IS NULL
BEGIN
    ALTER TABLE dbo.InvoiceLines ADD DiscountId INT NULL;

    ALTER TABLE dbo.InvoiceLines
        ADD CONSTRAINT FK_InvoiceLines_Discounts
        FOREIGN KEY (DiscountId) REFERENCES dbo.Discounts (DiscountId);
END;

/* Backfill drafts only: issued invoices are immutable. */
UPDATE l
SET    l.DiscountId = c.DefaultDiscountId
FROM   dbo.InvoiceLines AS l
       INNER JOIN dbo.Invoices  AS i ON i.InvoiceId  = l.InvoiceId
       INNER JOIN dbo.Customers AS c ON c.CustomerId = i.CustomerId
WHERE  i.Status = 'DRAFT'
  AND  l.DiscountId IS NULL
  AND  c.DefaultDiscountId IS NOT NULL;

PRINT CONCAT('V002: ', @@ROWCOUNT, ' draft line(s) received the customer''s default discount');

COMMIT TRANSACTION;
GO
