/*
    Table: dbo.Payments

    Money received against an invoice. A refund is a negative amount with
    Method = 'REFUND'. Overpayments are rejected by dbo.usp_ApplyPayment, not by a
    constraint, because the check needs the invoice total.
*/
CREATE TABLE dbo.Payments
(
    PaymentId       INT             IDENTITY(1, 1) NOT NULL,
    InvoiceId       INT             NOT NULL,
    PaidAt          DATETIME2(0)    NOT NULL,
    Amount          DECIMAL(19, 2)  NOT NULL,
    Method          VARCHAR(16)     NOT NULL,   -- 'TRANSFER', 'CARD', 'CHEQUE', 'CASH', 'REFUND'
    Reference       NVARCHAR(64)    NULL,       -- bank reference / card authorisation code
    CreatedBy       NVARCHAR(128)   NOT NULL CONSTRAINT DF_Payments_CreatedBy DEFAULT (SUSER_SNAME()),

    CONSTRAINT PK_Payments PRIMARY KEY CLUSTERED (PaymentId),
    CONSTRAINT FK_Payments_Invoices FOREIGN KEY (InvoiceId) REFERENCES dbo.Invoices (InvoiceId),
    CONSTRAINT CK_Payments_Method CHECK (Method IN ('TRANSFER', 'CARD', 'CHEQUE', 'CASH', 'REFUND')),
    CONSTRAINT CK_Payments_Amount CHECK
    (
        (Method = 'REFUND' AND Amount < 0) OR (Method <> 'REFUND' AND Amount > 0)
    )
);
GO

CREATE NONCLUSTERED INDEX IX_Payments_Invoice
    ON dbo.Payments (InvoiceId)
    INCLUDE (Amount, PaidAt);
GO
