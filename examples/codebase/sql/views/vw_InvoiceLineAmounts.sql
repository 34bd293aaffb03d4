/*
    dbo.vw_InvoiceLineAmounts

    One row per invoice line with its gross, discount and net amounts, computed
    exactly like dbo.fn_LineNetAmount but set-based (the scalar function is too slow
    for reporting over a full year). Used by dbo.usp_ComputeInvoiceTotal and by the
    accounting export.
*/
CREATE OR ALTER VIEW dbo.vw_InvoiceLineAmounts
WITH SCHEMABINDING
AS
SELECT  l.InvoiceLineId,
        l.InvoiceId,
        l.LineNo,
        l.Description,
        l.Quantity,
        l.UnitPrice,
        l.TaxRateId,
        tr.Code                                         AS TaxCode,
        tr.Rate                                         AS TaxRate,
        gross.Amount                                    AS GrossAmount,
        disc.Amount                                     AS DiscountAmount,
        gross.Amount - disc.Amount                      AS NetAmount
FROM    dbo.InvoiceLines AS l
        INNER JOIN dbo.TaxRates AS tr
                ON tr.TaxRateId = l.TaxRateId
        LEFT  JOIN dbo.Discounts AS d
                ON d.DiscountId = l.DiscountId
        CROSS APPLY (SELECT CAST(ROUND(l.Quantity * l.UnitPrice, 2) AS DECIMAL(19, 2)) AS Amount) AS gross
        CROSS APPLY (SELECT CAST(CASE d.Kind
                                     WHEN 'P' THEN ROUND(gross.Amount * d.Value / 100.0, 2)
                                     WHEN 'A' THEN CASE WHEN d.Value > gross.Amount THEN gross.Amount ELSE d.Value END
                                     ELSE 0
                                 END AS DECIMAL(19, 2)) AS Amount) AS disc;
GO
