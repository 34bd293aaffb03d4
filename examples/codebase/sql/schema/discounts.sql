/*
    Table: dbo.Discounts

    A discount is either a percentage of the line amount (Kind = 'P', Value = 12.5
    means 12.5 %) or a fixed amount per line (Kind = 'A', in invoice currency).
    A fixed amount never makes a line negative: see dbo.fn_LineNetAmount.
*/
CREATE TABLE dbo.Discounts
(
    DiscountId      INT             IDENTITY(1, 1) NOT NULL,
    Code            NVARCHAR(32)    NOT NULL,
    Description     NVARCHAR(200)   NULL,
    Kind            CHAR(1)         NOT NULL,
    Value           DECIMAL(19, 4)  NOT NULL,
    ValidFrom       DATE            NOT NULL,
    ValidTo         DATE            NULL,
    IsActive        BIT             NOT NULL CONSTRAINT DF_Discounts_IsActive DEFAULT (1),

    CONSTRAINT PK_Discounts PRIMARY KEY CLUSTERED (DiscountId),
    CONSTRAINT UQ_Discounts_Code UNIQUE (Code),
    CONSTRAINT CK_Discounts_Kind CHECK (Kind IN ('P', 'A')),
    CONSTRAINT CK_Discounts_Value CHECK
    (
        (Kind = 'P' AND Value > 0 AND Value <= 100)
        OR (Kind = 'A' AND Value > 0)
    )
);
GO

ALTER TABLE dbo.Customers
    ADD CONSTRAINT FK_Customers_DefaultDiscount
    FOREIGN KEY (DefaultDiscountId) REFERENCES dbo.Discounts (DiscountId);
GO
