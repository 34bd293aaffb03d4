#!/usr/bin/env python3
"""Regenerates the synthetic part of the tokenizer corpus (deterministic: fixed seed).

The hand-written files (prose, code, SQL, C#, JSON, multilingual text, emoji chat) are
committed as they are; this script writes the larger machine-shaped files that real prompts
also contain: structured logs, SQL dumps, Markdown reports and whitespace-heavy configuration.
Run from this directory: `python3 gen_corpus.py`. The outputs are committed, so tests never
need Python.
"""

import json
import random

rng = random.Random(20240611)

FIRST = ["Ana", "Björn", "Chiara", "Dmitri", "Émile", "Fatima", "Gonzalo", "Hana", " Igor", "Jürgen",
         "Kwame", "Léa", "Mateus", "Nguyễn", "Olga", "Pádraig", "Quentin", "Raúl", "Søren", "Takeshi",
         "Ursula", "Věra", "Wiktoria", "Xochitl", "Yusuf", "Zoë", "李", "さくら", "Анна", "محمد"]
LAST = ["Okafor", "Lindqvist", "Rossi", "Volkov", "Dubois", "Haddad", "Pérez", "Novák", "Ødegaard",
        "Yamamoto", "O'Brien", "van der Berg", "Schmidt-Weiß", "Kowalski", "Dupont", "Silva", "Kim",
        "Müller", "García Márquez", "Ivanova", "Chen", "Papadopoulos", "Nakamura", "Smith"]
CITIES = ["Lisboa", "Kraków", "München", "Zürich", "Reykjavík", "São Paulo", "Montréal", "Tōkyō",
          "Cork", "Århus", "İzmir", "Malmö", "Besançon", "Oaxaca", "Seoul", "Nairobi", "Perth"]
STREETS = ["Rua Augusta", "ul. Floriańska", "Leopoldstraße", "Bahnhofstrasse", "Laugavegur",
           "Avenida Paulista", "rue Sainte-Catherine", "Main Street", "Strøget", "Kordon Boyu"]
PRODUCTS = ["USB-C hub (7-in-1)", "Mechanical keyboard — 75%, hot-swap", "4K monitor 27\"",
            "Noise-cancelling headphones", "Standing desk frame", "Ergonomic mouse (left-handed)",
            "Laptop sleeve 14\"", "Webcam 1080p/60fps", "Thunderbolt 4 dock", "Cable organiser ×10"]
SERVICES = ["api-gateway", "auth", "billing-worker", "search", "notifier", "image-resizer", "scheduler"]
PATHS = ["/v1/orders", "/v1/orders/{id}", "/v1/customers/{id}/invoices", "/v2/search?q={q}",
         "/healthz", "/v1/uploads", "/v1/webhooks/stripe", "/admin/reports/monthly"]
UAS = ["Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
       "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
       "okhttp/4.12.0", "python-requests/2.32.3", "curl/8.8.0", "Go-http-client/2.0"]
MESSAGES = [
    "request completed",
    "upstream timed out after {ms} ms; retrying (attempt {n}/5)",
    "cache miss for key user:{id}:profile",
    "rate limit exceeded for tenant t_{id} ({n} req/s > 50 req/s)",
    "slow query: SELECT * FROM orders WHERE customer_id = $1 AND status = ANY($2) took {ms} ms",
    "payment intent pi_{hex} moved to state requires_capture",
    "failed to parse JSON body: expected `,` or `}}` at line {n} column {ms}",
    "user {id} uploaded \"Screenshot {n}.png\" ({ms} KiB)",
    "TLS handshake failed: certificate has expired (notAfter=2024-0{n}-15T00:00:00Z)",
    "évènement reçu: commande n°{id} expédiée",
    "キューに {n} 件のジョブがあります",
]
WORDS = ("the a of to and in is it that for on with as was at by this be from or have an are "
         "not but we they which you one all were when there can more if out so what about up "
         "customer order invoice refund shipment delay warehouse ticket priority escalate "
         "resolved pending review latency error timeout deploy rollback migration schema").split()


def uuid():
    return "%08x-%04x-%04x-%04x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), 0x4000 | rng.getrandbits(12),
                                          0x8000 | rng.getrandbits(14), rng.getrandbits(48))


def name():
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def sentence(n):
    words = [rng.choice(WORDS) for _ in range(n)]
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice([".", ".", ".", "?", "!", "…"])


def service_log(path, target):
    out = []
    size = 0
    t = 1717400000.0
    while size < target:
        t += rng.expovariate(5.0)
        level = rng.choices(["DEBUG", "INFO", "WARN", "ERROR"], [3, 10, 2, 1])[0]
        msg = rng.choice(MESSAGES).format(ms=rng.randint(1, 30000), n=rng.randint(1, 9), id=rng.randint(1, 10**6),
                                          hex="%024x" % rng.getrandbits(96))
        rec = {
            "ts": f"2024-06-{int(t) % 28 + 1:02d}T{int(t) % 86400 // 3600:02d}:{int(t) % 3600 // 60:02d}:{t % 60:06.3f}Z",
            "level": level,
            "service": rng.choice(SERVICES),
            "trace_id": uuid(),
            "msg": msg,
            "http": {"method": rng.choice(["GET", "POST", "PUT", "DELETE", "PATCH"]),
                     "path": rng.choice(PATHS).format(id=rng.randint(1, 99999), q="caf%C3%A9+near+me"),
                     "status": rng.choice([200, 200, 200, 201, 204, 301, 400, 401, 404, 409, 429, 500, 502, 503]),
                     "duration_ms": round(rng.lognormvariate(3.5, 1.1), 2),
                     "client_ip": f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                     "ua": rng.choice(UAS)},
        }
        if level == "ERROR":
            rec["error"] = {"kind": rng.choice(["Timeout", "ConnectionReset", "InvalidInput", "Internal"]),
                            "stack": "\n".join(f"    at {rng.choice(SERVICES).replace('-', '_')}::handler::fn_{i}"
                                               f" (src/{rng.choice(['lib', 'db', 'http'])}.rs:{rng.randint(10, 900)})"
                                               for i in range(rng.randint(2, 6)))}
        line = json.dumps(rec, ensure_ascii=rng.random() < 0.5) + "\n"
        out.append(line)
        size += len(line.encode())
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(out)


def orders_dump(path, target):
    out = ["-- Dump of table `orders` (MySQL 8.0 flavour)\n", "SET NAMES utf8mb4;\n", "START TRANSACTION;\n\n"]
    size = 0
    oid = 100000
    while size < target:
        rows = []
        for _ in range(rng.randint(5, 25)):
            oid += rng.randint(1, 7)
            who = name().replace("'", "''")
            rows.append("  (%d, '%s', '%s', '%s %d, %s', '%s', %d, %.2f, '%s', %s)" % (
                oid, who, who.lower().replace(" ", ".").replace("''", "") + "@example.invalid",
                rng.choice(STREETS), rng.randint(1, 240), rng.choice(CITIES), rng.choice(PRODUCTS).replace("'", "''"),
                rng.randint(1, 12), rng.uniform(3, 2500), f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
                f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
                rng.choice(["NULL", "'gift'", "'express'", "'fragile; handle with care'", "'leave at door'"])))
        stmt = ("INSERT INTO `orders` (`id`, `customer`, `email`, `address`, `product`, `qty`, `total_eur`, "
                "`placed_at`, `note`) VALUES\n" + ",\n".join(rows) + ";\n\n")
        out.append(stmt)
        size += len(stmt.encode())
    out.append("COMMIT;\n")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(out)


def report_md(path, target):
    out = ["# Weekly support report\n\n"]
    size = 0
    week = 1
    while size < target:
        part = [f"## Week {week}\n\n", sentence(rng.randint(8, 20)) + " " + sentence(rng.randint(5, 15)) + "\n\n"]
        part.append("| Ticket | Customer | Priority | Age (h) | Status |\n|-------:|:---------|:--------:|--------:|--------|\n")
        for _ in range(rng.randint(4, 12)):
            part.append(f"| #{rng.randint(1000, 99999)} | {name():<24} | {rng.choice(['P1', 'P2', 'P3', 'P4'])} "
                        f"| {rng.uniform(0.1, 400):8.1f} | {rng.choice(['open', 'pending', 'resolved', 'escalated'])} |\n")
        part.append("\n### Notable\n\n")
        for _ in range(rng.randint(2, 5)):
            part.append(f"- **{rng.choice(SERVICES)}**: {sentence(rng.randint(6, 18))}\n")
            if rng.random() < 0.4:
                part.append(f"  - follow-up: {sentence(rng.randint(4, 10))} (owner: @{rng.choice(FIRST).lower()})\n")
        if rng.random() < 0.5:
            part.append("\n```bash\n$ kubectl -n prod logs deploy/%s --since=1h | grep -c ERROR\n%d\n```\n" % (
                rng.choice(SERVICES), rng.randint(0, 5000)))
        part.append("\n> " + sentence(rng.randint(10, 25)) + "\n\n---\n\n")
        text = "".join(part)
        out.append(text)
        size += len(text.encode())
        week += 1
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(out)


def whitespace_mix(path, target):
    """Whitespace as real files carry it, plus the exotic kinds the pre-tokenizer must handle."""
    exotic = ["\u00a0", "\u2002", "\u2003", "\u2009", "\u200a", "\u202f", "\u205f", "\u3000", "\u1680",
              "\u0085", "\u2028", "\u2029", "\x0b", "\x0c", "\t", "\r", "\r\n", "\n"]
    blocks = []
    # YAML with deep indentation and trailing spaces.
    yaml = ["services:\n"]
    for s in SERVICES:
        yaml.append(f"  {s}:\n    image: registry.example.invalid/{s}:1.{rng.randint(0, 40)}.{rng.randint(0, 9)}   \n"
                    f"    env:\n      - name: LOG_LEVEL\n        value: \"info\"\n      - name: POOL_SIZE\n"
                    f"        value: \"{rng.randint(2, 64)}\"\n    resources:\n      limits: {{ cpu: \"500m\", memory: 256Mi }}\n\n")
    blocks.append("".join(yaml))
    # Makefile with tabs.
    blocks.append("build:\n\tcargo build --release\n\n\ntest:\n\tcargo test --workspace -- --nocapture\n\t@echo \"done\"\n\n"
                  ".PHONY:\tbuild\ttest\n\n")
    # CRLF INI.
    blocks.append("\r\n".join(["[server]", "host = 0.0.0.0", "port = 8080", "", "[db]", "url    =    postgres://localhost/app",
                               "pool   =    16", "", ""]))
    # ASCII box and aligned columns.
    blocks.append("+----------+----------+\n|  name    |  value   |\n+----------+----------+\n|  alpha   |      1   |\n"
                  "|  beta    |     22   |\n+----------+----------+\n\n")
    # Python with 4-space indentation and blank lines with stray spaces.
    blocks.append("def f(x):\n    if x:\n        return [\n            1,\n            2,\n        ]\n    \n    return None\n\n\n")
    size = sum(len(b.encode()) for b in blocks)
    while size < target:
        r = rng.random()
        if r < 0.25:
            b = " " * rng.randint(1, 300) + rng.choice(WORDS)
        elif r < 0.45:
            b = "".join(rng.choice(exotic) for _ in range(rng.randint(1, 40))) + rng.choice(WORDS)
        elif r < 0.6:
            b = "\n" * rng.randint(1, 20) + " " * rng.randint(0, 12) + sentence(rng.randint(3, 9))
        elif r < 0.7:
            b = "\t" * rng.randint(1, 12) + rng.choice(WORDS) + " " * rng.randint(1, 30) + "\n"
        elif r < 0.8:
            b = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8))) + " " * rng.randint(1, 10) + "\r\n"
        elif r < 0.9:
            b = rng.choice(["  ", " \t ", "\u00a0\u00a0", " \u3000 "]).join(str(rng.randint(0, 99999)) for _ in range(6)) + "\n"
        else:
            b = "".join(rng.choice([" ", "  ", "\t", "\n", " \n", "\n ", "!", "?", ".", ",", "'s", "'LL", "42", "é"])
                        for _ in range(rng.randint(5, 60)))
        blocks.append(b)
        size += len(b.encode())
    blocks.append("\n\n   \t  ")  # the file ends in whitespace on purpose
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("".join(blocks))


if __name__ == "__main__":
    service_log("service_log.jsonl", 80_000)
    orders_dump("orders_dump.sql", 60_000)
    report_md("support_report.md", 60_000)
    whitespace_mix("whitespace_mix.txt", 40_000)
