#!/usr/bin/env python3
"""Warehouse-shaped tables that no default was chosen on (benches/unseen.sh).

    tables.py SEED OUT_DIR

Writes OUT_DIR/<name>.csv and .dcs for two families and OUT_DIR/tables.toml
for `dpincon-cli experiment suite --tables`:

- `unseen`: eight tables as a warehouse holds them, constraints written the
  way a data engineer writes them (keys as FDs, FDs over dimension columns,
  a cross-table-style reference, an order DC with and without equality);
- `typos`: one clean table whose FDs hold on groups of 1,500 and 5,000 rows,
  with m = 0, 1, 3, 10, 30, 100 and 300 rows given a wrong region. It sweeps
  the trade the release README's "group privacy" paragraph states: m = 0 is
  a loose structural bound, large m are hubs.

Plain Python (no packages), seeded: the same SEED writes the same files.
The shapes are written independently of `dpincon-generate`, so they share
no code and no parameters with the training suite.
"""
import csv
import os
import random
import sys


def write(out, name, family, header, rows, constraints, toml):
    with open(os.path.join(out, name + ".csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    with open(os.path.join(out, name + ".dcs"), "w") as f:
        f.write("\n".join(constraints) + "\n")
    toml.append(
        f'[[table]]\nname = "{name}"\nfamily = "{family}"\n'
        f'data = "{out}/{name}.csv"\nconstraints = "{out}/{name}.dcs"\n'
    )


def orders(r):
    """Order lines: a key broken by 30 re-sent orders (quantity differs), a
    customer's segment with 0.2% typos, and six products whose price changed
    mid-year (two price classes in six product groups; Pareto popularity)."""
    segment = {c: r.choice("ABCDE") for c in range(3000)}
    price = {p: round(r.uniform(1, 500), 2) for p in range(400)}
    changed = set(r.sample(range(400), 6))
    rows = []
    for i in range(20000):
        c, day = r.randrange(3000), r.randrange(365)
        p = min(int(r.paretovariate(1.2)) - 1, 399)
        s = segment[c] if r.random() > 0.002 else r.choice("ABCDE")
        up = price[p] if not (p in changed and day > 200) else round(price[p] * 1.1, 2)
        rows.append([i, c, s, p, up, r.randint(1, 20), day])
    for i in r.sample(range(20000), 30):
        again = list(rows[i])
        again[5] += 1
        rows.append(again)
    return (["order_id", "customer", "segment", "product", "unit_price", "qty", "day"], rows,
            ["order_id -> customer, segment, product, unit_price, qty, day",
             "customer -> segment", "product -> unit_price"])


def employees(r):
    """An org chart: nobody earns more than their manager (3% do), 15
    department names mistyped."""
    salary, rows = {}, []
    for i in range(6000):
        manager = "" if i < 20 else r.randrange(max(1, i // 8), max(2, i // 3))
        s = 200000 if manager == "" else salary[manager] * r.uniform(0.6, 0.95)
        if manager != "" and r.random() < 0.03:
            s = salary[manager] * r.uniform(1.01, 1.3)
        salary[i] = s
        d = r.randrange(40)
        rows.append([i, manager, d, f"dept {d}", int(s)])
    for row in r.sample(rows, 15):
        row[3] = f"dept {r.randrange(40)}"
    return (["id", "manager", "dept", "dept_name", "salary"], rows,
            ["id -> manager, dept, salary", "dept -> dept_name",
             "not(t1.manager=t2.id&t1.salary>t2.salary)"])


def sensors(r):
    """Meter readings: (sensor, ts) is a key, a counter never decreases within
    a sensor (0.05% glitches read high; a few meters reset once)."""
    rows = []
    for s in range(60):
        count, reset = 0, r.random() < 0.04
        for t in range(500):
            count += r.randint(0, 5)
            v = count + r.randint(50, 500) if r.random() < 0.0005 else count
            if reset and t == 300:
                count = 0
            rows.append([s, t, f"site {s % 12}", v])
    for row in r.sample(rows, 10):
        row[2] = f"site {r.randrange(12)}"
    return (["sensor", "ts", "site", "counter"], rows,
            ["sensor, ts -> site, counter", "sensor -> site",
             "not(t1.sensor=t2.sensor&t1.ts<t2.ts&t1.counter>t2.counter)"])


def addresses(r):
    """Postal codes: zip determines city and state, city determines state,
    0.5% of cities mistyped, zip popularity exponential."""
    zips = {z: (f"city {z // 4}", f"S{z // 60}") for z in range(800)}
    rows = []
    for i in range(12000):
        z = min(int(r.expovariate(1 / 120)), 799)
        city, state = zips[z]
        if r.random() < 0.005:
            city = f"city {r.randrange(200)}"
        rows.append([i, z, city, state, r.randrange(10**6)])
    return (["id", "zip", "city", "state", "phone"], rows,
            ["id -> zip, city, state, phone", "zip -> city", "zip -> state", "city -> state"])


def transactions(r, typos=0):
    """Payments: account -> branch and branch -> region hold on groups of
    about 1,500 and 5,000 rows, 15 rows loaded twice (no conflict); with
    `typos`, that many rows carry a wrong region."""
    branch = {a: r.randrange(10) for a in range(2000)}
    rows = []
    for i in range(15000):
        a = r.randrange(2000)
        b = branch[a]
        rows.append([i, a, b, f"R{b % 3}", round(r.uniform(1, 1000), 2), r.randrange(10**5)])
    for i in r.sample(range(15000), 15):
        rows.append(list(rows[i]))
    for i in r.sample(range(15000), typos):
        rows[i][3] = f"R{(int(rows[i][3][1:]) + 1) % 3}"
    return (["txn", "account", "branch", "region", "amount", "ts"], rows,
            ["txn -> account, amount, ts", "account -> branch", "branch -> region",
             "not(t1.account=t2.account&t1.ts=t2.ts&t1.amount!=t2.amount)"])


def currencies(r):
    """Two of sixty countries use two currencies (dense conflicts), city ->
    country with 1% typos."""
    rows = []
    for i in range(8000):
        country = min(int(r.expovariate(1 / 8)), 59)
        currency = f"C{country}" if country not in (3, 7) else r.choice([f"C{country}", "EUR"])
        coded = country if r.random() > 0.01 else r.randrange(60)
        rows.append([i, country * 10 + r.randrange(10), coded, currency])
    return (["id", "city", "country", "currency"], rows,
            ["city -> country", "country -> currency"])


def codes(r):
    """A small wide dimension: six code -> name FDs over 2,000 rows, 1% of
    each name column mistyped."""
    rows = []
    for i in range(2000):
        row = [i]
        for j in range(6):
            code = r.randrange(20 + 10 * j)
            name = f"n{j}-{code}" if r.random() > 0.01 else f"n{j}-{r.randrange(20 + 10 * j)}"
            row += [code, name]
        rows.append(row)
    header = ["id"] + [c for j in range(6) for c in (f"c{j}", f"name{j}")]
    return header, rows, [f"c{j} -> name{j}" for j in range(6)]


def shipments(r):
    """Ids are issued in shipping order except for 0.3% registered late (an
    order DC without equality), beside carrier -> carrier_name."""
    rows = []
    for i, shipped in enumerate(sorted(r.randrange(1000) for _ in range(10000))):
        if r.random() < 0.003:
            shipped = max(0, shipped - r.randint(1, 5))
        carrier = r.randrange(30)
        name = f"carrier {carrier}" if r.random() > 0.003 else f"carrier {r.randrange(30)}"
        rows.append([i, carrier, name, shipped, shipped + r.randint(1, 10)])
    return (["id", "carrier", "carrier_name", "shipped", "delivered"], rows,
            ["carrier -> carrier_name", "not(t1.id<t2.id&t1.shipped>t2.shipped)"])


def main():
    seed, out = int(sys.argv[1]), os.path.realpath(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    toml = []
    for i, make in enumerate([orders, employees, sensors, addresses, transactions,
                              currencies, codes, shipments]):
        write(out, make.__name__, "unseen", *make(random.Random(seed * 100 + i)), toml)
    for m in [0, 1, 3, 10, 30, 100, 300]:
        write(out, f"typos-m{m}", "typos", *transactions(random.Random(seed), m), toml)
    with open(os.path.join(out, "tables.toml"), "w") as f:
        f.write("\n".join(toml))


if __name__ == "__main__":
    main()
