"""The asyncmy side of bench/peers.sh: the pool suite's Large Result Set and Connection
Pool, the same queries on the same table (benchmark_data, loaded by dbcompare's pool suite),
one warm-up and RUNS measured runs, medians in seconds as JSON on stdout."""
import asyncio
import importlib.metadata
import json
import statistics
import sys
import time
from urllib.parse import urlparse

import asyncmy

COLUMNS = "id, user_id, username, email, created_at, updated_at, score, is_active, data"


async def large_result_set(conn):
    start = time.perf_counter()
    async with conn.cursor() as cur:
        await cur.execute(f"SELECT {COLUMNS} FROM benchmark_data WHERE id <= %s ORDER BY id", (33000,))
        rows = await cur.fetchall()
    elapsed = time.perf_counter() - start
    assert len(rows) == 33000, len(rows)
    return elapsed


async def connection_pool(args, run):
    start = time.perf_counter()
    # autocommit as dbcompare's connections have it: asyncmy's default (off) makes every
    # SELECT open a transaction that the pool rolls back on release, about 10x slower.
    pool = await asyncmy.create_pool(minsize=5, maxsize=20, autocommit=True, **args)
    counter = iter(range(2000))

    async def worker():
        for n in counter:
            row_id = 1 + ((n + run * 2000) * 7919) % 100000
            async with pool.acquire() as conn:
                async with conn.cursor() as cur:
                    await cur.execute(f"SELECT {COLUMNS} FROM benchmark_data WHERE id = %s", (row_id,))
                    row = await cur.fetchone()
                    assert row[0] == row_id

    await asyncio.gather(*(worker() for _ in range(50)))
    elapsed = time.perf_counter() - start
    pool.close()
    await pool.wait_closed()
    return elapsed


async def main(url, runs):
    u = urlparse(url)
    args = dict(host=u.hostname, port=u.port or 3306, user=u.username or "root",
                password=u.password or "", db=u.path.lstrip("/"))
    conn = await asyncmy.connect(autocommit=True, **args)
    large = [await large_result_set(conn) for _ in range(runs + 1)][1:]
    conn.close()
    pool = [await connection_pool(args, run) for run in range(runs + 1)][1:]
    print(json.dumps({
        "asyncmy": importlib.metadata.version("asyncmy"),
        "LargeResultSet": statistics.median(large),
        "ConnectionPool": statistics.median(pool),
    }))


asyncio.run(main(sys.argv[1], int(sys.argv[2])))
