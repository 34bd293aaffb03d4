"""Monthly accounting export: issued invoices of a month as a CSV file.

Usage: python export_invoices.py 2024-05 > invoices-2024-05.csv

The accountants import this file into their ledger. Amounts come from the frozen
totals on dbo.Invoices, never recomputed here.
"""
import csv
import os
import sys
from datetime import date

import pyodbc

QUERY = """
SELECT i.InvoiceNumber, i.IssueDate, c.CustomerNumber, c.LegalName,
       i.SubtotalAmount, i.DiscountAmount, i.TaxAmount, i.TotalAmount
FROM dbo.Invoices AS i
JOIN dbo.Customers AS c ON c.CustomerId = i.CustomerId
WHERE i.Status <> 'VOID' AND i.IssueDate >= ? AND i.IssueDate < ?
ORDER BY i.InvoiceNumber
"""


def month_bounds(month: str) -> tuple[date, date]:
    year, mon = (int(part) for part in month.split("-"))
    start = date(year, mon, 1)
    end = date(year + (mon == 12), mon % 12 + 1, 1)
    return start, end


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    start, end = month_bounds(argv[1])
    with pyodbc.connect(os.environ["INVOICING_DSN"]) as conn:
        rows = conn.cursor().execute(QUERY, start, end).fetchall()
    writer = csv.writer(sys.stdout, delimiter=";")
    writer.writerow(["number", "date", "customer", "name", "subtotal", "discount", "tax", "total"])
    for row in rows:
        writer.writerow(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
