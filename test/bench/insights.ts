/**
 * Insights benchmark (issue 21): `npm run bench:insights -- --transactions 1000000 --accounts 100000`.
 *
 * Against the real Postgres and NATS of this machine it
 *  1. starts the real service (`src/main.ts`, as `npm start` runs it) on a scratch database and NATS prefix, and signs
 *     up one tenant (its test-mode dashboard token is what the insight endpoints answer to);
 *  2. stops the service and seeds that tenant's test mode straight into Postgres, set-based: M customers and M virtual
 *     accounts (7 in 10 with an expected amount, 3 in 10 of those with an expiry date from 60 days ago to 60 days
 *     ahead, created over the last 180 days), one billing schedule per 10 accounts (Monthly, three periods opened,
 *     due 5 days after each start), and N deposits (inbox rows and transactions) spread over the accounts and the last
 *     180 days, with a mix of classifications, risk scores and statuses (1 in 100 held for review, 1 in 50 unmatched).
 *     The amounts paid on the accounts are set by a formula (the bench measures reads, not the reconciler);
 *  3. marks the roll-ups as not built and starts the service again: its insights worker builds them from the seeded
 *     data (the same path an existing deployment takes when this version lands), timed (`buildSeconds`);
 *  4. asks each endpoint `--requests` times one after another (after `--warmup` unmeasured ones) with the tenant's
 *     dashboard token and reports p50, p99 and max in milliseconds: the overview, the overview for the last 30 days,
 *     aging, the 90-day forecast and the 50 customers with most outstanding;
 *  5. checks the overview against a scan of the source tables (the deposits counted per classification, what was
 *     expected of the accounts) and prints ONE JSON line: transactions, accounts, schedules, seedSeconds,
 *     buildSeconds, endpoints { name: { p50Ms, p99Ms, maxMs } }, checksPassed. Exit code 1 when a check fails.
 * Everything it made (database, streams, temp files) is removed at the end, also on failure.
 *
 * Flags: --transactions N (1000000), --accounts M (100000), --requests (500), --warmup (50); --keep leaves the seeded
 * database in place (its name is printed) and --database NAME measures an earlier kept one again without seeding or
 * building (seeding 10,000,000 deposits takes a while; the latencies are best measured on a quiet machine).
 */
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { deleteTopology } from "../../streams/JetStream.js"
import { NatsLive } from "../../streams/Nats.js"
import { freePort, http, removeTempDirs, type Service, startService, tempDir } from "../support/Processes.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase, withClient } from "../support/TestDatabase.js"
import { parseBenchArgs, positiveInteger } from "./args.js"
import { expectStatus, stop } from "./shared.js"

const NATS_URL = process.env.TEST_NATS_URL ?? "127.0.0.1:4222"
const CHUNK = 500_000

const args = parseBenchArgs(process.argv.slice(2), { values: ["transactions", "accounts", "requests", "warmup", "database"], flags: ["keep"] })
const KEEP = args.flags.has("keep")
const REUSE = args.values.get("database")?.at(-1)
const PASSWORD = "correct horse battery staple"
const N = args.num("transactions", 1_000_000, positiveInteger)
const M = args.num("accounts", 100_000, positiveInteger)
const REQUESTS = args.num("requests", 500, positiveInteger)
const WARMUP = args.num("warmup", 50, (n) => Number.isSafeInteger(n) && n >= 0)

const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`)

/** Deterministic pseudo-random 0..mod-1 of (i, salt), in SQL. */
const rnd = (i: string, salt: number, mod: number) => `(abs(hashint8(${i}::bigint + ${salt * 1_000_003})) % ${mod})`

const seed = async (url: string, tenantId: string) => {
  await withClient(url, async (c) => {
    const q = async (what: string, text: string, params: ReadonlyArray<unknown> = []) => {
      const started = Date.now()
      const r = await c.query(text, params as Array<unknown>)
      log(`seed: ${what} (${r.rowCount ?? 0} rows, ${((Date.now() - started) / 1000).toFixed(1)} s)`)
    }
    await q("customers", `INSERT INTO customers (id, tenant_id, mode, name, email, created_at)
      SELECT 'cus_b' || i, $1, 'test', 'Customer ' || i, 'c' || i || '@bench.ng', now() - (i % 180) * interval '1 day'
      FROM generate_series(1, ${M}) i`, [tenantId])
    await q("accounts", `INSERT INTO virtual_accounts (id, tenant_id, mode, account_ref, customer_id, request_fingerprint, status, provider,
        nuban, bank_code, bank_name, account_name, expected_amount_kobo, expiry_date_utc, amount_paid_kobo, created_at)
      SELECT 'va_b' || i, $1, 'test', 'acct-' || i, 'cus_b' || i, 'bench', 'Active', 'sandbox', lpad((7000000000 + i)::text, 10, '0'),
        '999', 'Bench MFB', 'Customer ' || i,
        CASE WHEN i % 10 < 7 THEN 10000 + ${rnd("i", 1, 490000)} END,
        CASE WHEN i % 10 < 3 AND i % 10 <> 0 THEN now() + (${rnd("i", 2, 120)} - 60) * interval '1 day' END,
        0, now() - (i % 180) * interval '1 day'
      FROM generate_series(1, ${M}) i`, [tenantId])
    // Amounts paid: a quarter nothing, a quarter half, a quarter exactly, a quarter over (open accounts: something).
    await q("amounts paid", `UPDATE virtual_accounts SET amount_paid_kobo = CASE
        WHEN expected_amount_kobo IS NULL THEN 5000 + ${rnd("substr(id, 5)::bigint", 3, 100000)}
        ELSE (expected_amount_kobo * (substr(id, 5)::bigint % 4)) / 2 END
      WHERE tenant_id = $1`, [tenantId])
    await q("billing schedules", `INSERT INTO billing_schedules (id, tenant_id, mode, virtual_account_id, reference, request_fingerprint, interval,
        amount_kobo, due_offset_days, status, anchor_date, next_k, next_start_at, periods_opened, base_kobo, created_by)
      SELECT 'bs_b' || i, $1, 'test', 'va_b' || i, 'sch-' || i, 'bench', 'Monthly', 5000 + ${rnd("i", 4, 45000)}, 5, 'Active',
        (now() AT TIME ZONE 'Africa/Lagos')::date - interval '2 months' - (i % 28) * interval '1 day', 3,
        ((((now() AT TIME ZONE 'Africa/Lagos')::date - interval '2 months' - (i % 28) * interval '1 day') + interval '3 months')::date::timestamp AT TIME ZONE 'Africa/Lagos'),
        3, (SELECT expected_amount_kobo FROM virtual_accounts WHERE id = 'va_b' || i), 'bench'
      FROM generate_series(10, ${M}, 10) i`, [tenantId])
    await q("billing periods", `INSERT INTO billing_periods (id, schedule_id, index, period_start, period_end, due_date, due_at, overdue_at, amount_kobo)
      SELECT 'bp_' || s.id || '_' || n, s.id, n + 1,
        ((s.anchor_date + n * interval '1 month')::date::timestamp AT TIME ZONE 'Africa/Lagos'),
        ((s.anchor_date + (n + 1) * interval '1 month')::date::timestamp AT TIME ZONE 'Africa/Lagos'),
        (s.anchor_date + n * interval '1 month' + interval '5 days')::date,
        ((s.anchor_date + n * interval '1 month' + interval '5 days')::date::timestamp AT TIME ZONE 'Africa/Lagos'),
        ((s.anchor_date + n * interval '1 month' + interval '6 days')::date::timestamp AT TIME ZONE 'Africa/Lagos'),
        s.amount_kobo
      FROM billing_schedules s CROSS JOIN generate_series(0, 2) n WHERE s.tenant_id = $1`, [tenantId])
    await q("expected amounts raised by the periods", `UPDATE virtual_accounts va SET expected_amount_kobo = va.expected_amount_kobo + 3 * s.amount_kobo
      FROM billing_schedules s WHERE s.virtual_account_id = va.id AND s.tenant_id = $1`, [tenantId])
    for (let lo = 1; lo <= N; lo += CHUNK) {
      const hi = Math.min(N, lo + CHUNK - 1)
      await q(`inbox ${lo}..${hi}`, `INSERT INTO inbound_events (id, tenant_id, mode, provider, provider_reference, kind, account_number, payload, received_at, reconciled_at)
        SELECT i, $1, 'test', 'sandbox', 'ref-' || i, 'inflow', lpad((7000000000 + 1 + (i * 7919) % ${M})::text, 10, '0'), '{}'::jsonb,
          now() - ${rnd("i", 5, 180 * 24)} * interval '1 hour', now()
        FROM generate_series(${lo}::bigint, ${hi}::bigint) i`, [tenantId])
      await q(`deposits ${lo}..${hi}`, `INSERT INTO transactions (id, tenant_id, mode, provider, reference, inbound_event_id, virtual_account_id, account_ref,
          nuban, kind, amount_kobo, applied_kobo, status, reconciliation_status, risk_score, risk_reasons, sender_name, paid_at, reconciled_at)
        SELECT i, $1, 'test', 'sandbox', 'ref-' || i, i,
          CASE WHEN i % 50 = 0 THEN NULL ELSE 'va_b' || a END, CASE WHEN i % 50 = 0 THEN NULL ELSE 'acct-' || a END,
          lpad((7000000000 + a)::text, 10, '0'), 'inflow', amount, CASE WHEN i % 50 = 0 OR i % 100 = 1 THEN 0 ELSE amount END,
          CASE WHEN i % 50 = 0 OR i % 100 = 1 THEN 'PendingReview' ELSE 'Completed' END,
          CASE WHEN i % 50 = 0 THEN 'Unmatched' ELSE (ARRAY['Exact', 'Exact', 'Exact', 'Underpaid', 'Overpaid', 'Duplicate', 'Credited', 'Credited'])[1 + i % 8] END,
          least(100, ${rnd("i", 6, 40)} + CASE WHEN i % 7 = 0 THEN 45 ELSE 0 END), '[]'::jsonb, 'PAYER ' || a, paid, paid
        FROM (SELECT i, 1 + (i * 7919) % ${M} AS a, 100 + ${rnd("i", 7, 500000)} AS amount,
          now() - ${rnd("i", 5, 180 * 24)} * interval '1 hour' AS paid FROM generate_series(${lo}::bigint, ${hi}::bigint) i) s`, [tenantId])
    }
    await q("sequences", `SELECT setval('inbound_events_id_seq', ${N}), setval('transactions_id_seq', ${N})`)
    await q("analyze", "ANALYZE")
    await q("roll-ups to be built", "UPDATE insight_state SET built = false, built_at = NULL")
  })
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

const main = async () => {
  const db = REUSE ?? (await createScratchDatabase("bench_insights"))
  const url = databaseUrl(db)
  const natsPrefix = `bi${crypto.randomBytes(5).toString("hex")}.`
  const dataDir = tempDir("bench-insights-")
  let svc: Service | undefined
  let failed = false
  try {
    const port = String(await freePort())
    const env = { PORT: port, DATABASE_URL: url, NATS_URL, NATS_PREFIX: natsPrefix, DATA_DIR: dataDir, LOG_LEVEL: "info" }
    let email: string
    let tenantId: string
    let seedSeconds: number | null = null
    let buildSeconds: number | null = null
    if (REUSE === undefined) {
      svc = await startService(env)
      email = `bench-${crypto.randomBytes(4).toString("hex")}@example.ng`
      const signup = expectStatus("signup", await http(svc.baseUrl, "POST", "/api/v1/dashboard/signup", {
        json: { businessName: "Insights bench", email, password: PASSWORD }
      }), 201)
      tenantId = signup.tenantId as string
      await stop(svc)
      svc = undefined
      const seedStarted = Date.now()
      await seed(url, tenantId)
      seedSeconds = (Date.now() - seedStarted) / 1000
    } else {
      const owner = await withClient(url, (c) => c.query("SELECT email, tenant_id FROM users ORDER BY created_at LIMIT 1"))
      email = owner.rows[0].email
      tenantId = owner.rows[0].tenant_id
    }
    const buildStarted = Date.now()
    svc = await startService(env)
    for (;;) {
      const built = await withClient(url, (c) => c.query("SELECT built FROM insight_state")).then((r) => r.rows[0]?.built === true)
      if (built) break
      await new Promise((r) => setTimeout(r, 500))
    }
    if (REUSE === undefined) {
      buildSeconds = (Date.now() - buildStarted) / 1000
      log(`roll-ups built in ${buildSeconds.toFixed(1)} s (service start included)`)
    }
    const login = expectStatus("login", await http(svc.baseUrl, "POST", "/api/v1/dashboard/login", {
      json: { email, password: PASSWORD, mode: "test" }
    }), 200)
    const token = login.accessToken as string
    const lagos = (ms: number) => new Date(ms + 3_600_000).toISOString().slice(0, 10)
    const endpoints: ReadonlyArray<[string, string]> = [
      ["overview", "/api/v1/insights"],
      ["overview30d", `/api/v1/insights?from=${lagos(Date.now() - 29 * 86_400_000)}&to=${lagos(Date.now())}`],
      ["aging", "/api/v1/insights/aging"],
      ["forecast90d", "/api/v1/insights/forecast?days=90"],
      ["customers50", "/api/v1/insights/customers?take=50"]
    ]
    const results: Record<string, { p50Ms: number; p99Ms: number; maxMs: number }> = {}
    for (const [name, path] of endpoints) {
      for (let i = 0; i < WARMUP; i++) expectStatus(name, await http(svc.baseUrl, "GET", path, { token }), 200)
      const times: Array<number> = []
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = performance.now()
        const r = await http(svc.baseUrl, "GET", path, { token })
        times.push(performance.now() - t0)
        expectStatus(name, r, 200)
      }
      times.sort((a, b) => a - b)
      results[name] = { p50Ms: +percentile(times, 50).toFixed(2), p99Ms: +percentile(times, 99).toFixed(2), maxMs: +times.at(-1)!.toFixed(2) }
      log(`${name}: p50 ${results[name]!.p50Ms} ms, p99 ${results[name]!.p99Ms} ms`)
    }

    // Checks against a scan of the source tables.
    const overview = expectStatus("overview", await http(svc.baseUrl, "GET", "/api/v1/insights", { token }), 200)
    const scan = await withClient(url, async (c) => {
      const byStatus = await c.query(`SELECT reconciliation_status AS s, count(*)::bigint AS n, sum(amount_kobo)::bigint AS a FROM transactions
        WHERE tenant_id = $1 AND mode = 'test' GROUP BY 1`, [tenantId])
      const expected = await c.query(`SELECT coalesce(sum(expected_amount_kobo), 0)::bigint AS e,
          coalesce(sum(least(amount_paid_kobo, expected_amount_kobo)), 0)::bigint AS c FROM virtual_accounts
        WHERE tenant_id = $1 AND mode = 'test' AND status = 'Active' AND expected_amount_kobo IS NOT NULL`, [tenantId])
      const counts = await c.query(`SELECT (SELECT count(*) FROM billing_schedules WHERE tenant_id = $1)::int AS s,
        (SELECT count(*) FROM virtual_accounts WHERE tenant_id = $1)::int AS a`, [tenantId])
      return {
        byStatus: byStatus.rows, expected: expected.rows[0], schedules: counts.rows[0].s as number, accounts: counts.rows[0].a as number,
        transactions: byStatus.rows.reduce((n: number, r: { n: string }) => n + Number(r.n), 0)
      }
    })
    const problems: Array<string> = []
    for (const row of scan.byStatus) {
      const got = overview.reconciliation[row.s]
      if (got.count !== Number(row.n) || got.amountKobo !== Number(row.a)) problems.push(`${row.s}: ${JSON.stringify(got)} vs scan ${row.n}/${row.a}`)
    }
    if (overview.expectedKobo !== Number(scan.expected.e)) problems.push(`expectedKobo ${overview.expectedKobo} vs scan ${scan.expected.e}`)
    if (overview.collectedKobo !== Number(scan.expected.c)) problems.push(`collectedKobo ${overview.collectedKobo} vs scan ${scan.expected.c}`)
    for (const p of problems) log(`CHECK FAILED: ${p}`)
    failed = problems.length > 0
    process.stdout.write(`${JSON.stringify({
      database: KEEP ? db : null, transactions: scan.transactions, accounts: scan.accounts, schedules: scan.schedules,
      seedSeconds: seedSeconds === null ? null : +seedSeconds.toFixed(1), buildSeconds: buildSeconds === null ? null : +buildSeconds.toFixed(1),
      requestsPerEndpoint: REQUESTS, endpoints: results, checksPassed: !failed
    })}\n`)
  } finally {
    if (svc) await stop(svc)
    if (KEEP || REUSE !== undefined) log(`kept database ${db}: measure again with --database ${db}; drop it with: psql -h 127.0.0.1 -U postgres -c 'DROP DATABASE ${db}'`)
    else await dropScratchDatabase(db).catch((e) => log(`could not drop ${db}: ${String(e)}`))
    await Effect.runPromise(deleteTopology({ prefix: natsPrefix }).pipe(Effect.provide(NatsLive(NATS_URL, "collections-bench")))).catch(() => undefined)
    fs.rmSync(dataDir, { recursive: true, force: true })
    removeTempDirs()
  }
  if (failed) process.exit(1)
}

main().catch((e) => {
  log(`bench failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
  process.exit(1)
})
