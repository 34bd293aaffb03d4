/*
    dbo.usp_ComputeInvoiceTotal

    Computes the totals of one invoice from its lines and, when @Persist = 1, stores
    them on the invoice header. This is THE reference implementation of the invoice
    total; InvoiceTotalCalculator (C#) mirrors it for previews and must give the same
    result to the cent.

    How the total is computed
    -------------------------
      1. Each line:     gross    = ROUND(Quantity * UnitPrice, 2)
                        discount = line discount (percentage or fixed amount, capped)
                        net      = gross - discount
      2. Per tax rate:  tax      = ROUND(SUM(net of the lines with that rate) * Rate, 2)
                        (rounded once per rate, not per line: see V005)
      3. Invoice:       subtotal = SUM(gross)
                        discount = SUM(discount)
                        tax      = SUM(tax per rate)
                        total    = SUM(net) + tax

    Rounding is half away from zero (T-SQL ROUND on DECIMAL).

    Parameters
        @InvoiceId  the invoice
        @Persist    1 = write the amounts on dbo.Invoices (only allowed for DRAFT invoices)

    Result sets
        1. one row per tax rate: TaxCode, TaxRate, NetAmount, TaxAmount
        2. one row: SubtotalAmount, DiscountAmount, TaxAmount, TotalAmount

    History
        2023-03-02  first version
        2024-02-12  line discounts (V002)
        2024-05-21  tax rounded per rate instead of per line (V005)
*/
CREATE OR ALTER PROCEDURE dbo.usp_ComputeInvoiceTotal
    @InvoiceId  INT,
    @Persist    BIT = 0
AS
BEGIN
    SET NOCOUNT ON;
    SET XACT_ABORT ON;

    DECLARE @Status VARCHAR(16);

    SELECT @Status = Status
    FROM   dbo.Invoices
    WHERE  InvoiceId = @InvoiceId;

    IF @Status IS NULL
    BEGIN
        RAISERROR(N'Invoice %d does not exist.', 16, 1, @InvoiceId);
        RETURN;
    END;

    IF @Persist = 1 AND @Status <> 'DRAFT'
    BEGIN
        -- Issued invoices are legal documents: their amounts never change.
        RAISERROR(N'Invoice %d is %s; only DRAFT invoices can be recomputed.', 16, 1, @InvoiceId, @Status);
        RETURN;
    END;

    /* Step 1: line amounts (gross, discount, net), rounded per line. */
    DECLARE @Lines TABLE
    (
        TaxRateId       INT             NOT NULL,
        TaxCode         VARCHAR(16)     NOT NULL,
        TaxRate         DECIMAL(5, 4)   NOT NULL,
        GrossAmount     DECIMAL(19, 2)  NOT NULL,
        DiscountAmount  DECIMAL(19, 2)  NOT NULL,
        NetAmount       DECIMAL(19, 2)  NOT NULL
    );

    INSERT INTO @Lines (TaxRateId, TaxCode, TaxRate, GrossAmount, DiscountAmount, NetAmount)
    SELECT  a.TaxRateId,
            a.TaxCode,
            a.TaxRate,
            a.GrossAmount,
            a.DiscountAmount,
            a.NetAmount
    FROM    dbo.vw_InvoiceLineAmounts AS a
    WHERE   a.InvoiceId = @InvoiceId;

    /* Step 2: tax per rate -- ROUND once per rate, on the sum of the net amounts. */
    DECLARE @PerRate TABLE
    (
        TaxCode     VARCHAR(16)     NOT NULL,
        TaxRate     DECIMAL(5, 4)   NOT NULL,
        NetAmount   DECIMAL(19, 2)  NOT NULL,
        TaxAmount   DECIMAL(19, 2)  NOT NULL
    );

    INSERT INTO @PerRate (TaxCode, TaxRate, NetAmount, TaxAmount)
    SELECT  l.TaxCode,
            l.TaxRate,
            SUM(l.NetAmount),
            dbo.fn_RoundCurrency(SUM(l.NetAmount) * l.TaxRate)
    FROM    @Lines AS l
    GROUP BY l.TaxRateId, l.TaxCode, l.TaxRate;

    /* Step 3: invoice totals. */
    DECLARE @Subtotal DECIMAL(19, 2),
            @Discount DECIMAL(19, 2),
            @Tax      DECIMAL(19, 2),
            @Total    DECIMAL(19, 2);

    SELECT  @Subtotal = ISNULL(SUM(GrossAmount), 0),
            @Discount = ISNULL(SUM(DiscountAmount), 0)
    FROM    @Lines;

    SELECT  @Tax = ISNULL(SUM(TaxAmount), 0)
    FROM    @PerRate;

    SET @Total = (@Subtotal - @Discount) + @Tax;

    IF @Persist = 1
    BEGIN
        UPDATE dbo.Invoices
        SET    SubtotalAmount = @Subtotal,
               DiscountAmount = @Discount,
               TaxAmount      = @Tax,
               TotalAmount    = @Total
        WHERE  InvoiceId = @InvoiceId
          AND  Status    = 'DRAFT';   -- re-checked: the status may have changed since the first read
    END;

    SELECT TaxCode, TaxRate, NetAmount, TaxAmount
    FROM   @PerRate
    ORDER BY TaxRate DESC;

    SELECT @Subtotal AS SubtotalAmount,
           @Discount AS DiscountAmount,
           @Tax      AS TaxAmount,
           @Total    AS TotalAmount;
END;
GO
