import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { DEFAULT_DAILY_PAYOUT_CAP_KOBO, lagosDay } from "../../src/domain/MoneyOut.js"
import { runCli, tempDir } from "../support/Processes.js"
import { TestDatabaseLive, TestDatabaseUrl } from "../support/TestDatabase.js"
import { query, shown } from "../support/CliRuns.js"

/** Each CLI run is a fresh Node process (a second or more on a busy machine). */
const TEST_TIMEOUT_MS = 180_000

/** A pattern matching exactly `text`. */
const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`)



layer(TestDatabaseLive, { timeout: 120_000, excludeTestServices: true })("collections tenants set-payout-cap on a real Postgres", (it) => {
  const dataDir = tempDir("collections-cli-cap-")
  const cli = (...args: Array<string>) =>
    Effect.flatMap(TestDatabaseUrl, ({ url }) => Effect.promise(() => runCli(args, { DATABASE_URL: Redacted.value(url), DATA_DIR: dataDir })))
  const dbUrl = Effect.map(TestDatabaseUrl, ({ url }) => Redacted.value(url))
  const limitsOf = (url: string, tenantId: string) =>
    query<{ mode: string; dailyCapKobo: string }>(url, `SELECT mode, daily_cap_kobo::text AS "dailyCapKobo" FROM payout_limits WHERE tenant_id = $1 ORDER BY mode`, [tenantId])

  it.effect("sets the cap per mode (payout_limits), replaces it, takes today's counter at once, and is audited as operator:cli", () =>
    Effect.gen(function* () {
      const url = yield* dbUrl
      const migrated = yield* cli("migrate")
      expect(migrated.code, shown(migrated)).toBe(0)
      const created = yield* cli("tenants", "create", "--name", "Lekki Payouts Ltd")
      expect(created.code, shown(created)).toBe(0)
      const tenantId = created.stdout.trim()
      expect(tenantId).toMatch(/^ten_[0-9a-f]{24}$/)
      expect(yield* limitsOf(url, tenantId)).toEqual([])

      // Today (Africa/Lagos) already used 200,000 kobo of the default cap; an earlier day's counter stays as it was.
      const today = lagosDay(Date.now())
      yield* query(url, `INSERT INTO payout_days (tenant_id, mode, day, cap_kobo, used_kobo) VALUES
        ($1, 'test', $2::date, $3, 200000), ($1, 'test', $2::date - 1, $3, 300000)`, [tenantId, today, DEFAULT_DAILY_PAYOUT_CAP_KOBO])

      const set = yield* cli("tenants", "set-payout-cap", tenantId, "--mode", "test", "--daily-kobo", "1000000")
      expect(set.code, shown(set)).toBe(0)
      expect(set.stdout.trim()).toBe(`${tenantId} (test): daily payout cap 1000000 kobo (was ${DEFAULT_DAILY_PAYOUT_CAP_KOBO})`)
      expect(yield* limitsOf(url, tenantId)).toEqual([{ mode: "test", dailyCapKobo: "1000000" }])

      // Another value replaces it; the live mode has its own cap; 0 stops payouts.
      const lower = yield* cli("tenants", "set-payout-cap", tenantId, "--daily-kobo", "150000", "--mode", "test")
      expect(lower.code, shown(lower)).toBe(0)
      expect(lower.stdout.trim()).toBe(`${tenantId} (test): daily payout cap 150000 kobo (was 1000000)`)
      const live = yield* cli("tenants", "set-payout-cap", tenantId, "--mode", "live", "--daily-kobo", "0")
      expect(live.code, shown(live)).toBe(0)
      expect(yield* limitsOf(url, tenantId)).toEqual([{ mode: "live", dailyCapKobo: "0" }, { mode: "test", dailyCapKobo: "150000" }])

      // Today's counter took the new cap, never below what today already used; the earlier day kept its own.
      const days = yield* query<{ mode: string; day: string; capKobo: string; usedKobo: string }>(url,
        `SELECT mode, day::text AS day, cap_kobo::text AS "capKobo", used_kobo::text AS "usedKobo" FROM payout_days WHERE tenant_id = $1 ORDER BY mode, day`, [tenantId])
      expect(days).toEqual([
        { mode: "live", day: today, capKobo: "0", usedKobo: "0" },
        { mode: "test", day: days[1]!.day, capKobo: String(DEFAULT_DAILY_PAYOUT_CAP_KOBO), usedKobo: "300000" },
        { mode: "test", day: today, capKobo: "200000", usedKobo: "200000" }
      ])

      const audit = yield* query<{ actor: string; mode: string; details: unknown }>(url,
        "SELECT actor, mode, details FROM audit_log WHERE tenant_id = $1 AND action = 'payout_cap.set' ORDER BY id", [tenantId])
      expect(audit).toEqual([
        { actor: "operator:cli", mode: "test", details: { dailyCapKobo: 1_000_000, previous: DEFAULT_DAILY_PAYOUT_CAP_KOBO } },
        { actor: "operator:cli", mode: "test", details: { dailyCapKobo: 150_000, previous: 1_000_000 } },
        { actor: "operator:cli", mode: "live", details: { dailyCapKobo: 0, previous: DEFAULT_DAILY_PAYOUT_CAP_KOBO } }
      ])
    }),
    TEST_TIMEOUT_MS
  )

  it.effect("bad input exits non-zero with a message and changes nothing: fractions, negatives, non-numbers, unknown tenant, bad or missing mode", () =>
    Effect.gen(function* () {
      const url = yield* dbUrl
      const migrated = yield* cli("migrate")
      expect(migrated.code, shown(migrated)).toBe(0)
      const tenantId = (yield* cli("tenants", "create", "--name", "Aba Traders")).stdout.trim()
      expect(tenantId).toMatch(/^ten_/)

      const cap = (...args: Array<string>) => ["tenants", "set-payout-cap", ...args]
      // [arguments, exit code, what stderr says]: 1 for a refused value or tenant, 2 for a usage error (with the usage).
      const cases: Array<[Array<string>, number, RegExp]> = [
        ...["1.5", "1e6", "abc", "-5", "99999999999999999999"].map((raw): [Array<string>, number, RegExp] =>
          [cap(tenantId, "--mode", "test", "--daily-kobo", raw), 1, exactly(`error: --daily-kobo must be a whole number of kobo (1 naira = 100 kobo), got ${JSON.stringify(raw)}`)]),
        [cap("ten_nope", "--mode", "test", "--daily-kobo", "1000"), 1, /^error: unknown tenant "ten_nope"$/],
        [cap(tenantId, "--mode", "test", "--daily-kobo", ""), 2, /^error: --daily-kobo must not be empty\nUsage: collections tenants set-payout-cap <tenantId> --mode test\|live --daily-kobo N/],
        [cap(tenantId, "--mode", "prod", "--daily-kobo", "1000"), 2, /^error: .*--mode.*\nUsage: /],
        [cap(tenantId, "--daily-kobo", "1000"), 2, /^error: .*--mode.*\nUsage: /],
        [cap(tenantId, "--mode", "test"), 2, /^error: .*--daily-kobo.*\nUsage: /],
        [cap("--mode", "test", "--daily-kobo", "1000"), 2, /^error: missing <tenantId>/]
      ]
      const results = yield* Effect.forEach(cases, ([args]) => cli(...args), { concurrency: 4 })
      results.forEach((r, i) => {
        const [args, code, says] = cases[i]!
        expect(r.code, `${args.join(" ")}\n${shown(r)}`).toBe(code)
        expect(r.stderr.trim(), `${args.join(" ")}\n${shown(r)}`).toMatch(says)
        expect(r.stdout).toBe("")
      })

      expect(yield* query(url, "SELECT * FROM payout_limits WHERE tenant_id IN ($1, 'ten_nope')", [tenantId])).toEqual([])
      expect(yield* query(url, "SELECT * FROM audit_log WHERE action = 'payout_cap.set' AND tenant_id IN ($1, 'ten_nope')", [tenantId])).toEqual([])
    }),
    TEST_TIMEOUT_MS
  )
})
