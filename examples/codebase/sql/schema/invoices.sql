/*
    Table: dbo.Invoices

    Header of an invoice. The amount columns are a cache of what
    dbo.usp_ComputeInvoiceTotal computes from the lines; they are written when the
    invoice is issued and must not be edited by hand afterwards.

    Status life cycle:  DRAFT -> ISSUED -> (PARTIALLY_PAID) -> PAID
                        DRAFT -> VOID,  ISSUED -> VOID (credit note required)
*/
CREATE TABLE dbo.Invoices
(
    InvoiceId           INT             IDENTITY(1, 1) NOT NULL,
    InvoiceNumber       NVARCHAR(20)    NULL,           -- assigned on issue: 'INV-2024-000042'
    CustomerId          INT             NOT NULL,
    Status              VARCHAR(16)     NOT NULL CONSTRAINT DF_Invoices_Status DEFAULT ('DRAFT'),
    CurrencyCode        CHAR(3)         NOT NULL CONSTRAINT DF_Invoices_Currency DEFAULT ('EUR'),
    IssueDate           DATE            NULL,
    DueDate             DATE            NULL,

    -- Totals, all rounded to 2 decimals (see dbo.fn_RoundCurrency)
    SubtotalAmount      DECIMAL(19, 2)  NOT NULL CONSTRAINT DF_Invoices_Subtotal DEFAULT (0),
    DiscountAmount      DECIMAL(19, 2)  NOT NULL CONSTRAINT DF_Invoices_Discount DEFAULT (0),
    TaxAmount           DECIMAL(19, 2)  NOT NULL CONSTRAINT DF_Invoices_Tax DEFAULT (0),
    TotalAmount         DECIMAL(19, 2)  NOT NULL CONSTRAINT DF_Invoices_Total DEFAULT (0),

    Notes               NVARCHAR(MAX)   NULL,
    CreatedAt           DATETIME2(0)    NOT NULL CONSTRAINT DF_Invoices_CreatedAt DEFAULT (SYSUTCDATETIME()),
    RowVersion          ROWVERSION      NOT NULL,

    CONSTRAINT PK_Invoices PRIMARY KEY CLUSTERED (InvoiceId),
    CONSTRAINT FK_Invoices_Customers FOREIGN KEY (CustomerId) REFERENCES dbo.Customers (CustomerId),
    CONSTRAINT CK_Invoices_Status CHECK (Status IN ('DRAFT', 'ISSUED', 'PARTIALLY_PAID', 'PAID', 'VOID')),
    CONSTRAINT CK_Invoices_Dates CHECK (DueDate IS NULL OR DueDate >= IssueDate)
);
GO

CREATE UNIQUE NONCLUSTERED INDEX UX_Invoices_InvoiceNumber
    ON dbo.Invoices (InvoiceNumber)
    WHERE InvoiceNumber IS NOT NULL;
GO

CREATE NONCLUSTERED INDEX IX_Invoices_Customer_Status
    ON dbo.Invoices (CustomerId, Status)
    INCLUDE (DueDate, TotalAmount);
GO
