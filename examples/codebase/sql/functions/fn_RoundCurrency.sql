/*
    dbo.fn_RoundCurrency

    Rounds an amount to the 2 decimals of the invoice currency, half away from zero
    (1.005 -> 1.01, -1.005 -> -1.01). This is what T-SQL's ROUND does for DECIMAL
    values, and what InvoiceTotalCalculator does in C# with
    MidpointRounding.AwayFromZero: both sides MUST agree, or the totals shown in the
    web preview will differ by a cent from the issued invoice.

    Currencies without minor units (JPY) are not supported yet.
*/
CREATE OR ALTER FUNCTION dbo.fn_RoundCurrency
(
    @Amount DECIMAL(38, 10)
)
RETURNS DECIMAL(19, 2)
WITH SCHEMABINDING
AS
BEGIN
    RETURN CAST(ROUND(@Amount, 2) AS DECIMAL(19, 2));
END;
GO
