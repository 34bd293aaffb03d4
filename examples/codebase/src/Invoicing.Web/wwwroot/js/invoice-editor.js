// Draft invoice editor: recomputes the totals on the server while the user types.
// The server endpoint (POST /invoices/preview) runs InvoiceTotalCalculator, so the
// numbers shown here are exactly the ones the issued invoice will carry.

const PREVIEW_DELAY_MS = 300;

function readLines(table) {
  return Array.from(table.querySelectorAll("tbody tr")).map((row, index) => ({
    lineNo: index + 1,
    description: row.querySelector("[name=description]").value,
    quantity: Number(row.querySelector("[name=quantity]").value),
    unitPrice: Number(row.querySelector("[name=unitPrice]").value),
    taxRateId: Number(row.querySelector("[name=taxRateId]").value),
    discountId: row.querySelector("[name=discountId]").value || null,
  }));
}

function debounce(fn, delay) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), delay);
  };
}

export function attachEditor(table, totalsElement) {
  const refresh = debounce(async () => {
    const response = await fetch("/invoices/preview", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(readLines(table)),
    });
    if (!response.ok) {
      totalsElement.textContent = "Preview unavailable";
      return;
    }
    const totals = await response.json();
    totalsElement.querySelector(".total").textContent = totals.total.toFixed(2);
  }, PREVIEW_DELAY_MS);

  table.addEventListener("input", refresh);
}
