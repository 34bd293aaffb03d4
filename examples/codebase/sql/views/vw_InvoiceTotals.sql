-- dbo.vw_InvoiceTotals
-- Totals recomputed from the lines, next to the cached header amounts, so that support
-- can spot invoices whose cached totals drifted (column HasDrift = 1).
-- Tax is rounded per rate, then summed (see V005__invoice_rounding.sql).
CREATE OR ALTER VIEW dbo.vw_InvoiceTotals
AS
WITH per_rate AS
(
    SELECT  a.InvoiceId,
            a.TaxRateId,
            SUM(a.GrossAmount)                                   AS Gross,
            SUM(a.DiscountAmount)                                AS Discount,
            SUM(a.NetAmount)                                     AS Net,
            CAST(ROUND(SUM(a.NetAmount) * MAX(a.TaxRate), 2) AS DECIMAL(19, 2)) AS Tax
    FROM    dbo.vw_InvoiceLineAmounts AS a
    GROUP BY a.InvoiceId, a.TaxRateId
),
computed AS
(
    SELECT  InvoiceId,
            SUM(Gross)      AS Subtotal,
            SUM(Discount)   AS Discount,
            SUM(Tax)        AS Tax,
            SUM(Net) + SUM(Tax) AS Total
    FROM    per_rate
    GROUP BY InvoiceId
)
SELECT  i.InvoiceId,
        i.InvoiceNumber,
        i.Status,
        ISNULL(c.Subtotal, 0)   AS ComputedSubtotal,
        ISNULL(c.Discount, 0)   AS ComputedDiscount,
        ISNULL(c.Tax, 0)        AS ComputedTax,
        ISNULL(c.Total, 0)      AS ComputedTotal,
        i.TotalAmount           AS CachedTotal,
        CASE WHEN i.Status <> 'DRAFT' AND i.TotalAmount <> ISNULL(c.Total, 0) THEN 1 ELSE 0 END AS HasDrift
FROM    dbo.Invoices AS i
        LEFT JOIN computed AS c ON c.InvoiceId = i.InvoiceId;
GO
