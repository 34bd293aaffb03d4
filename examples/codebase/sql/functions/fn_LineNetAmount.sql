/*
    dbo.fn_LineNetAmount

    Net amount of one invoice line, before tax:

        gross    = ROUND(Quantity * UnitPrice, 2)
        discount = ROUND(gross * Value / 100, 2)   for a percentage discount ('P')
                 = MIN(Value, gross)               for a fixed amount ('A')
        net      = gross - discount

    A fixed discount larger than the line is capped at the line amount, so a line
    is never negative.
*/
CREATE OR ALTER FUNCTION dbo.fn_LineNetAmount
(
    @Quantity       DECIMAL(12, 3),
    @UnitPrice      DECIMAL(19, 4),
    @DiscountKind   CHAR(1),            -- NULL when the line has no discount
    @DiscountValue  DECIMAL(19, 4)
)
RETURNS DECIMAL(19, 2)
WITH SCHEMABINDING
AS
BEGIN
    DECLARE @Gross    DECIMAL(19, 2) = dbo.fn_RoundCurrency(@Quantity * @UnitPrice);
    DECLARE @Discount DECIMAL(19, 2) = 0;

    IF @DiscountKind = 'P'
        SET @Discount = dbo.fn_RoundCurrency(@Gross * @DiscountValue / 100.0);
    ELSE IF @DiscountKind = 'A'
        SET @Discount = CASE WHEN @DiscountValue > @Gross THEN @Gross ELSE @DiscountValue END;

    RETURN @Gross - @Discount;
END;
GO
