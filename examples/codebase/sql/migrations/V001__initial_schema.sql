-- V001: initial schema.
-- The table scripts under sql/schema are the source of truth; this migration only
-- runs them in dependency order for the deployment tool (DbUp), which executes each
-- batch separately (hence the GO separators).

:r ../schema/customers.sql
:r ../schema/tax_rates.sql
:r ../schema/discounts.sql
:r ../schema/invoices.sql
:r ../schema/invoice_lines.sql
:r ../schema/payments.sql

INSERT INTO dbo.SchemaVersions (ScriptName, Applied)
VALUES (N'V001__initial_schema.sql', SYSUTCDATETIME());
GO
