-- tSQLt tests for dbo.usp_ComputeInvoiceTotal.
-- Run with: EXEC tSQLt.Run 'InvoiceTotalTests';
EXEC tSQLt.NewTestClass 'InvoiceTotalTests';
GO

CREATE OR ALTER PROCEDURE InvoiceTotalTests.[test tax is rounded once per rate]
AS
BEGIN
    EXEC tSQLt.FakeTable 'dbo.Invoices';
    EXEC tSQLt.FakeTable 'dbo.InvoiceLines';
    EXEC tSQLt.FakeTable 'dbo.TaxRates';
    EXEC tSQLt.FakeTable 'dbo.Discounts';

    INSERT INTO dbo.Invoices (InvoiceId, CustomerId, Status) VALUES (1, 1, 'DRAFT');
    INSERT INTO dbo.TaxRates (TaxRateId, Code, Rate, ValidFrom) VALUES (3, 'RED', 0.0550, '2012-01-01');
    INSERT INTO dbo.InvoiceLines (InvoiceLineId, InvoiceId, LineNo, Description, Quantity, UnitPrice, TaxRateId)
    VALUES (1, 1, 1, N'a', 1, 0.05, 3),
           (2, 1, 2, N'b', 1, 0.05, 3),
           (3, 1, 3, N'c', 1, 0.05, 3);

    EXEC dbo.usp_ComputeInvoiceTotal @InvoiceId = 1, @Persist = 1;

    DECLARE @Tax DECIMAL(19, 2), @Total DECIMAL(19, 2);
    SELECT @Tax = TaxAmount, @Total = TotalAmount FROM dbo.Invoices WHERE InvoiceId = 1;

    -- Per line the tax would be 3 x ROUND(0.00275, 2) = 0.00; per rate it is ROUND(0.00825, 2) = 0.01.
    EXEC tSQLt.AssertEquals @Expected = 0.01, @Actual = @Tax;
    EXEC tSQLt.AssertEquals @Expected = 0.16, @Actual = @Total;
END;
GO

CREATE OR ALTER PROCEDURE InvoiceTotalTests.[test issued invoices cannot be recomputed]
AS
BEGIN
    EXEC tSQLt.FakeTable 'dbo.Invoices';
    INSERT INTO dbo.Invoices (InvoiceId, CustomerId, Status) VALUES (2, 1, 'ISSUED');

    EXEC tSQLt.ExpectException @ExpectedMessagePattern = N'%only DRAFT invoices can be recomputed%';
    EXEC dbo.usp_ComputeInvoiceTotal @InvoiceId = 2, @Persist = 1;
END;
GO
