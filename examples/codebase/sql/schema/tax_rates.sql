/*
    Table: dbo.TaxRates

    VAT rates with a validity period. A rate is never updated in place when the
    law changes: the old row gets a ValidTo date and a new row is inserted, so that
    re-computing an old invoice gives the same result as when it was issued.

    Rate is a fraction: 0.2000 means 20 %.
*/
CREATE TABLE dbo.TaxRates
(
    TaxRateId       INT             IDENTITY(1, 1) NOT NULL,
    Code            VARCHAR(16)     NOT NULL,           -- 'STD', 'RED', 'SUPER_RED', 'ZERO'
    Description     NVARCHAR(100)   NOT NULL,
    Rate            DECIMAL(5, 4)   NOT NULL,
    ValidFrom       DATE            NOT NULL,
    ValidTo         DATE            NULL,               -- NULL = still valid

    CONSTRAINT PK_TaxRates PRIMARY KEY CLUSTERED (TaxRateId),
    CONSTRAINT CK_TaxRates_Rate CHECK (Rate >= 0 AND Rate < 1),
    CONSTRAINT CK_TaxRates_Period CHECK (ValidTo IS NULL OR ValidTo > ValidFrom)
);
GO

CREATE UNIQUE NONCLUSTERED INDEX UX_TaxRates_Code_ValidFrom
    ON dbo.TaxRates (Code, ValidFrom);
GO

-- Seed data (France). Kept here rather than in a migration because tests rebuild the schema from these files.
INSERT INTO dbo.TaxRates (Code, Description, Rate, ValidFrom, ValidTo)
VALUES
    ('STD',       N'Taux normal',            0.2000, '2014-01-01', NULL),
    ('INT',       N'Taux intermédiaire',     0.1000, '2014-01-01', NULL),
    ('RED',       N'Taux réduit',            0.0550, '2012-01-01', NULL),
    ('SUPER_RED', N'Taux particulier',       0.0210, '1991-01-01', NULL),
    ('ZERO',      N'Exonéré (art. 262 CGI)', 0.0000, '1991-01-01', NULL);
GO
