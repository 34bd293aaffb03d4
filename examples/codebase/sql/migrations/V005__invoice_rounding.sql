-- V005: amounts are rounded per tax rate, not per line.
--
-- The tax authority's guidance (BOI-TVA-DECLA-30-20-20) allows rounding either per
-- line or per rate, but requires consistency. We switched to "per rate" because it is
-- what our accounting export expects; dbo.usp_ComputeInvoiceTotal was changed in the
-- same release. This script recomputes the cached totals of every DRAFT invoice.

SET NOCOUNT ON;

DECLARE @InvoiceId INT;

DECLARE drafts CURSOR LOCAL FAST_FORWARD FOR
    SELECT InvoiceId
    FROM   dbo.Invoices
    WHERE  Status = 'DRAFT';

OPEN drafts;
FETCH NEXT FROM drafts INTO @InvoiceId;

WHILE @@FETCH_STATUS = 0
BEGIN
    EXEC dbo.usp_ComputeInvoiceTotal @InvoiceId = @InvoiceId, @Persist = 1;
    FETCH NEXT FROM drafts INTO @InvoiceId;
END;

CLOSE drafts;
DEALLOCATE drafts;
GO
