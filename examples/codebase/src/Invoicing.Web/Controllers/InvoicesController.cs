using Invoicing.Data.Repositories;
using Invoicing.Domain.Entities;
using Invoicing.Services;
using Microsoft.AspNetCore.Mvc;

namespace Invoicing.Web.Controllers;

/// <summary>Back-office pages and the JSON endpoints used by the draft editor.</summary>
[Route("invoices")]
public class InvoicesController : Controller
{
    private readonly IInvoiceRepository _invoices;
    private readonly InvoiceTotalCalculator _calculator;
    private readonly InvoiceIssuer _issuer;
    private readonly PaymentService _payments;

    public InvoicesController(IInvoiceRepository invoices, InvoiceTotalCalculator calculator,
        InvoiceIssuer issuer, PaymentService payments)
    {
        _invoices = invoices;
        _calculator = calculator;
        _issuer = issuer;
        _payments = payments;
    }

    // GET /invoices/42
    [HttpGet("{id:int}")]
    public async Task<IActionResult> Details(int id, CancellationToken ct)
    {
        var invoice = await _invoices.GetWithLinesAsync(id, ct);
        if (invoice is null)
        {
            return NotFound();
        }

        // Drafts show live totals; issued invoices show the frozen ones.
        var totals = invoice.IsDraft
            ? _calculator.Compute(invoice.Lines)
            : new InvoiceTotalsResult(invoice.SubtotalAmount, invoice.DiscountAmount, invoice.TaxAmount,
                invoice.TotalAmount, Array.Empty<TaxLine>());

        return View(new InvoiceDetailsViewModel(invoice, totals));
    }

    // POST /invoices/preview  (called by the editor on every change, debounced)
    [HttpPost("preview")]
    public ActionResult<InvoiceTotalsResult> Preview([FromBody] List<InvoiceLine> lines)
    {
        if (lines.Count > 500)
        {
            return BadRequest("An invoice has at most 500 lines.");
        }

        return Ok(_calculator.Compute(lines));
    }

    [HttpPost("{id:int}/issue")]
    [ValidateAntiForgeryToken]
    public async Task<IActionResult> Issue(int id, CancellationToken ct)
    {
        try
        {
            var number = await _issuer.IssueAsync(id, issueDate: null, ct);
            TempData["Message"] = $"Invoice {number} issued.";
        }
        catch (InvalidOperationException ex)
        {
            TempData["Error"] = ex.Message;
        }

        return RedirectToAction(nameof(Details), new { id });
    }

    [HttpPost("{id:int}/payments")]
    [ValidateAntiForgeryToken]
    public async Task<IActionResult> AddPayment(int id, [FromForm] decimal amount, [FromForm] PaymentMethod method,
        [FromForm] string? reference, CancellationToken ct)
    {
        var result = await _payments.RecordAsync(id, amount, method, reference, ct);
        TempData[result.Success ? "Message" : "Error"] = result.Success ? "Payment recorded." : result.Error;
        return RedirectToAction(nameof(Details), new { id });
    }
}

public sealed record InvoiceDetailsViewModel(Invoice Invoice, InvoiceTotalsResult Totals);
