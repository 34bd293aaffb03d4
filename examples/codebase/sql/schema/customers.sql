/*
    Table: dbo.Customers
    Owner: Billing team

    One row per legal entity we invoice. Customers are never deleted; they are
    deactivated (IsActive = 0) so that historical invoices keep their references.
*/
IF OBJECT_ID(N'dbo.Customers', N'U') IS NULL
BEGIN
    CREATE TABLE dbo.Customers
    (
        CustomerId          INT IDENTITY(1, 1)  NOT NULL,
        CustomerNumber      NVARCHAR(20)        NOT NULL,   -- e.g. 'C-000123', printed on invoices
        LegalName           NVARCHAR(200)       NOT NULL,
        Email               NVARCHAR(320)       NULL,
        CountryCode         CHAR(2)             NOT NULL    CONSTRAINT DF_Customers_CountryCode DEFAULT ('FR'),
        VatNumber           NVARCHAR(32)        NULL,       -- intra-community VAT id; NULL for consumers
        PaymentTermsDays    SMALLINT            NOT NULL    CONSTRAINT DF_Customers_PaymentTerms DEFAULT (30),
        DefaultDiscountId   INT                 NULL,       -- applied to every new line unless overridden
        IsActive            BIT                 NOT NULL    CONSTRAINT DF_Customers_IsActive DEFAULT (1),
        CreatedAt           DATETIME2(0)        NOT NULL    CONSTRAINT DF_Customers_CreatedAt DEFAULT (SYSUTCDATETIME()),

        CONSTRAINT PK_Customers PRIMARY KEY CLUSTERED (CustomerId),
        CONSTRAINT UQ_Customers_CustomerNumber UNIQUE (CustomerNumber),
        CONSTRAINT CK_Customers_PaymentTerms CHECK (PaymentTermsDays BETWEEN 0 AND 120)
    );
END;
GO

-- Lookups by e-mail come from the customer portal login.
CREATE NONCLUSTERED INDEX IX_Customers_Email
    ON dbo.Customers (Email)
    WHERE Email IS NOT NULL;
GO
