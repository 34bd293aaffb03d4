/*
    Table: dbo.InvoiceLines

    Quantity has 3 decimals (hours, kilograms); UnitPrice has 4 decimals because
    some of our price lists are per thousand units. Amounts are only rounded at the
    line level, never earlier: see dbo.usp_ComputeInvoiceTotal.
*/
CREATE TABLE dbo.InvoiceLines
(
    InvoiceLineId   INT             IDENTITY(1, 1) NOT NULL,
    InvoiceId       INT             NOT NULL,
    LineNo          SMALLINT        NOT NULL,
    ProductCode     NVARCHAR(40)    NULL,
    Description     NVARCHAR(400)   NOT NULL,
    Quantity        DECIMAL(12, 3)  NOT NULL,
    UnitPrice       DECIMAL(19, 4)  NOT NULL,
    DiscountId      INT             NULL,       -- NULL = no discount on this line
    TaxRateId       INT             NOT NULL,

    CONSTRAINT PK_InvoiceLines PRIMARY KEY CLUSTERED (InvoiceLineId),
    CONSTRAINT FK_InvoiceLines_Invoices
        FOREIGN KEY (InvoiceId) REFERENCES dbo.Invoices (InvoiceId) ON DELETE CASCADE,
    CONSTRAINT FK_InvoiceLines_Discounts
        FOREIGN KEY (DiscountId) REFERENCES dbo.Discounts (DiscountId),
    CONSTRAINT FK_InvoiceLines_TaxRates
        FOREIGN KEY (TaxRateId) REFERENCES dbo.TaxRates (TaxRateId),
    CONSTRAINT UQ_InvoiceLines_LineNo UNIQUE (InvoiceId, LineNo),
    CONSTRAINT CK_InvoiceLines_Quantity CHECK (Quantity > 0),
    CONSTRAINT CK_InvoiceLines_UnitPrice CHECK (UnitPrice >= 0)
);
GO

CREATE NONCLUSTERED INDEX IX_InvoiceLines_TaxRate
    ON dbo.InvoiceLines (InvoiceId, TaxRateId)
    INCLUDE (Quantity, UnitPrice, DiscountId);
GO
