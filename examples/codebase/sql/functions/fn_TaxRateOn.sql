/*
    dbo.fn_TaxRateOn

    The rate of a tax code that was valid on a given date. Returns NULL when the
    code did not exist on that date (the caller must treat that as an error).
    Inline table-valued so that the optimizer can fold it into the caller's plan.
*/
CREATE OR ALTER FUNCTION dbo.fn_TaxRateOn
(
    @Code   VARCHAR(16),
    @OnDate DATE
)
RETURNS TABLE
WITH SCHEMABINDING
AS
RETURN
(
    SELECT TOP (1)
           tr.TaxRateId,
           tr.Rate
    FROM   dbo.TaxRates AS tr
    WHERE  tr.Code      = @Code
      AND  tr.ValidFrom <= @OnDate
      AND  (tr.ValidTo IS NULL OR tr.ValidTo > @OnDate)
    ORDER BY tr.ValidFrom DESC
);
GO
