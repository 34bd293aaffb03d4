using Invoicing.Data;
using Invoicing.Data.Repositories;
using Invoicing.Services;
using Microsoft.EntityFrameworkCore;

var builder = WebApplication.CreateBuilder(args);

var connectionString = builder.Configuration.GetConnectionString("Invoicing")
    ?? throw new InvalidOperationException("Connection string 'Invoicing' is missing (see appsettings.json).");

builder.Services.AddDbContext<InvoicingDbContext>(options =>
    options.UseSqlServer(connectionString, sql => sql.EnableRetryOnFailure(maxRetryCount: 3)));

// Dapper repositories take the connection string directly.
builder.Services.AddScoped<IInvoiceRepository>(_ => new InvoiceRepository(connectionString));
builder.Services.AddScoped(_ => new PaymentRepository(connectionString));
builder.Services.AddScoped<CustomerQueries>();

builder.Services.AddSingleton<InvoiceTotalCalculator>();
builder.Services.AddScoped<PaymentService>();
builder.Services.AddScoped<InvoiceIssuer>();

builder.Services.AddControllersWithViews();

var app = builder.Build();

if (!app.Environment.IsDevelopment())
{
    app.UseExceptionHandler("/Home/Error");
    app.UseHsts();
}

app.UseHttpsRedirection();
app.UseStaticFiles();
app.UseRouting();
app.UseAuthorization();

app.MapControllerRoute(name: "default", pattern: "{controller=Invoices}/{action=Index}/{id?}");

app.Run();
