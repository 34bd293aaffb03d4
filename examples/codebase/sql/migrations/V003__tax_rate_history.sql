-- V003: tax rates get a validity period.
-- Before V003 a rate change was an UPDATE of dbo.TaxRates.Rate, which silently changed the
-- total of old invoices when they were recomputed (incident INC-2291, January 2024).

SET XACT_ABORT ON;
BEGIN TRANSACTION;

ALTER TABLE dbo.TaxRates ADD ValidFrom DATE NULL, ValidTo DATE NULL;
GO

UPDATE dbo.TaxRates
SET    ValidFrom = '1991-01-01'
WHERE  ValidFrom IS NULL;

ALTER TABLE dbo.TaxRates ALTER COLUMN ValidFrom DATE NOT NULL;

ALTER TABLE dbo.TaxRates
    ADD CONSTRAINT CK_TaxRates_Period CHECK (ValidTo IS NULL OR ValidTo > ValidFrom);

-- The old unique index on Code alone would forbid a second row for the same code.
DROP INDEX IF EXISTS UX_TaxRates_Code ON dbo.TaxRates;

CREATE UNIQUE NONCLUSTERED INDEX UX_TaxRates_Code_ValidFrom
    ON dbo.TaxRates (Code, ValidFrom);

COMMIT TRANSACTION;
GO
