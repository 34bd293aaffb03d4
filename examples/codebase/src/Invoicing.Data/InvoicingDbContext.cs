using Invoicing.Domain.Entities;
using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Metadata.Builders;

namespace Invoicing.Data;

/// <summary>
/// EF Core mapping of the invoicing schema (see <c>sql/schema</c>). The schema itself is
/// owned by the SQL migrations, never by EF migrations: <see cref="OnModelCreating"/> only
/// describes what exists.
/// </summary>
public class InvoicingDbContext : DbContext
{
    public InvoicingDbContext(DbContextOptions<InvoicingDbContext> options)
        : base(options)
    {
    }

    public DbSet<Customer> Customers => Set<Customer>();
    public DbSet<Invoice> Invoices => Set<Invoice>();
    public DbSet<InvoiceLine> InvoiceLines => Set<InvoiceLine>();
    public DbSet<TaxRate> TaxRates => Set<TaxRate>();
    public DbSet<Discount> Discounts => Set<Discount>();
    public DbSet<Payment> Payments => Set<Payment>();

    protected override void OnModelCreating(ModelBuilder modelBuilder)
    {
        modelBuilder.HasDefaultSchema("dbo");

        modelBuilder.Entity<Customer>(ConfigureCustomer);
        modelBuilder.Entity<Invoice>(ConfigureInvoice);
        modelBuilder.Entity<InvoiceLine>(ConfigureInvoiceLine);

        modelBuilder.Entity<TaxRate>(b =>
        {
            b.ToTable("TaxRates");
            b.Property(t => t.Rate).HasPrecision(5, 4);
        });

        modelBuilder.Entity<Discount>(b =>
        {
            b.ToTable("Discounts");
            b.Property(d => d.Value).HasPrecision(19, 4);
            // Stored as CHAR(1) 'P' / 'A'.
            b.Property(d => d.Kind)
             .HasConversion(k => ((char)k).ToString(), s => (DiscountKind)s[0])
             .HasMaxLength(1)
             .IsFixedLength();
        });

        modelBuilder.Entity<Payment>(b =>
        {
            b.ToTable("Payments");
            b.Property(p => p.Amount).HasPrecision(19, 2);
            b.Property(p => p.Method).HasConversion(
                m => m.ToString().ToUpperInvariant(),
                s => Enum.Parse<PaymentMethod>(s, ignoreCase: true));
        });
    }

    private static void ConfigureCustomer(EntityTypeBuilder<Customer> b)
    {
        b.ToTable("Customers");
        b.HasIndex(c => c.CustomerNumber).IsUnique();
        b.Property(c => c.CountryCode).HasMaxLength(2).IsFixedLength();
        b.HasOne(c => c.DefaultDiscount).WithMany().HasForeignKey(c => c.DefaultDiscountId);
    }

    private static void ConfigureInvoice(EntityTypeBuilder<Invoice> b)
    {
        b.ToTable("Invoices");
        b.Property(i => i.RowVersion).IsRowVersion();

        // 'PARTIALLY_PAID' in the database, PartiallyPaid in C#.
        b.Property(i => i.Status).HasConversion(
            s => s == InvoiceStatus.PartiallyPaid ? "PARTIALLY_PAID" : s.ToString().ToUpperInvariant(),
            s => s == "PARTIALLY_PAID" ? InvoiceStatus.PartiallyPaid : Enum.Parse<InvoiceStatus>(s, true));

        foreach (var amount in new[] { "SubtotalAmount", "DiscountAmount", "TaxAmount", "TotalAmount" })
        {
            b.Property<decimal>(amount).HasPrecision(19, 2);
        }

        b.Ignore(i => i.IsDraft);
        b.Ignore(i => i.AmountDue);
        b.HasMany(i => i.Lines).WithOne().HasForeignKey(l => l.InvoiceId);
        b.HasMany(i => i.Payments).WithOne().HasForeignKey(p => p.InvoiceId);
    }

    private static void ConfigureInvoiceLine(EntityTypeBuilder<InvoiceLine> b)
    {
        b.ToTable("InvoiceLines");
        b.Property(l => l.Quantity).HasPrecision(12, 3);
        b.Property(l => l.UnitPrice).HasPrecision(19, 4);
        b.HasOne(l => l.Discount).WithMany().HasForeignKey(l => l.DiscountId);
        b.HasOne(l => l.TaxRate).WithMany().HasForeignKey(l => l.TaxRateId);
    }
}
