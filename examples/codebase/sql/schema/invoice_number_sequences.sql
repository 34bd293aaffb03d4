-- dbo.InvoiceNumberSequences: last invoice number used per calendar year.
-- Invoice numbers must be gapless within a year (French tax law), which an IDENTITY
-- or a SEQUENCE cannot guarantee (both lose values on rollback). usp_IssueInvoice
-- increments this row under UPDLOCK, HOLDLOCK instead.
CREATE TABLE dbo.InvoiceNumberSequences
(
    [Year]      INT NOT NULL,
    LastNumber  INT NOT NULL CONSTRAINT DF_InvoiceNumberSequences_Last DEFAULT (0),

    CONSTRAINT PK_InvoiceNumberSequences PRIMARY KEY CLUSTERED ([Year]),
    CONSTRAINT CK_InvoiceNumberSequences_Last CHECK (LastNumber >= 0)
);
GO
