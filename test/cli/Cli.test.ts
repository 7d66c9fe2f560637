import { expect, layer } from "@effect/vitest"
import { verify } from "@node-rs/argon2"
import { Effect, Redacted } from "effect"
import { TestDatabaseLive, TestDatabaseUrl } from "../support/TestDatabase.js"
import { runCli, tempDir } from "../support/Processes.js"
import { query, shown } from "../support/CliRuns.js"

/** Each CLI run is a fresh Node process (a second or more on a busy machine); a test makes up to ten. */
const TEST_TIMEOUT_MS = 180_000



layer(TestDatabaseLive, { timeout: 120_000, excludeTestServices: true })("collections CLI on a real Postgres", (it) => {
  const dataDir = tempDir("collections-cli-")
  const cli = (...args: Array<string>) =>
    Effect.flatMap(TestDatabaseUrl, ({ url }) =>
      Effect.promise(() => runCli(args, { DATABASE_URL: Redacted.value(url), DATA_DIR: dataDir }))
    )
  const dbUrl = Effect.map(TestDatabaseUrl, ({ url }) => Redacted.value(url))

  it.effect("migrate applies every migration once, then has nothing to do", () =>
    Effect.gen(function* () {
      const first = yield* cli("migrate")
      expect(first.code, shown(first)).toBe(0)
      expect(first.stdout).toMatch(/^applied 0001_tenancy$/m)
      const again = yield* cli("migrate")
      expect(again.code, shown(again)).toBe(0)
      expect(again.stdout.trim()).toBe("database is up to date")
    }),
    TEST_TIMEOUT_MS
  )

  it.effect("usage errors exit 2 with the usage, and never open the database", () =>
    Effect.gen(function* () {
      const noDb = { DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere", DATA_DIR: dataDir }
      // Each message is unit-tested in Args.test.ts; here, that the process prints it on stderr and exits 2.
      const cases: Array<[Array<string>, RegExp]> = [
        [[], /missing command/],
        [["tenants", "approve"], /missing <tenantId>/],
        [["keys", "create", "--tenant", "ten_x", "--mod", "test"], /unknown option --mod \(did you mean --mode\?\)/],
        [["replay", "--stream", "deposits"], /give exactly one of --from-seq N and --since ISO/]
      ]
      const results = yield* Effect.promise(() => Promise.all(cases.map(([args]) => runCli(args, noDb))))
      results.forEach((r, i) => {
        expect(r.code, shown(r)).toBe(2)
        expect(r.stderr, shown(r)).toMatch(cases[i]![1])
        expect(r.stdout).toBe("")
      })
      const help = yield* Effect.promise(() => runCli(["keys", "create", "--help"], noDb))
      expect(help.code, shown(help)).toBe(0)
      expect(help.stdout).toMatch(/Usage: collections keys create --tenant ID --mode test\|live \[--json\]/)
      const unreachable = yield* Effect.promise(() => runCli(["tenants", "list"], noDb))
      expect(unreachable.code, shown(unreachable)).toBe(1)
      expect(unreachable.stderr).toMatch(/^error: cannot open the database: /m)
    }),
    TEST_TIMEOUT_MS
  )

  it.effect("tenants create prints the id; list shows it as a table and as JSON", () =>
    Effect.gen(function* () {
      const created = yield* cli("tenants", "create", "--name", "Adaeze Foods Ltd")
      expect(created.code, shown(created)).toBe(0)
      const tenantId = created.stdout.trim()
      expect(tenantId).toMatch(/^ten_[0-9a-f]{24}$/)

      const table = yield* cli("tenants", "list")
      expect(table.code, shown(table)).toBe(0)
      expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+ONBOARDING\s+CREATED$/)
      expect(table.stdout).toMatch(new RegExp(`^${tenantId}\\s+Adaeze Foods Ltd\\s+NotStarted\\s+\\d{4}-`, "m"))

      const json = yield* cli("tenants", "list", "--json")
      expect(json.code, shown(json)).toBe(0)
      const rows = JSON.parse(json.stdout) as Array<{ id: string; name: string; onboardingStatus: string; createdAt: string }>
      expect(rows.find((t) => t.id === tenantId)).toMatchObject({ name: "Adaeze Foods Ltd", onboardingStatus: "NotStarted" })

      const audit = yield* query<{ actor: string; action: string }>(yield* dbUrl, "SELECT actor, action FROM audit_log WHERE tenant_id = $1", [tenantId])
      expect(audit).toEqual([{ actor: "operator:cli", action: "tenant.created" }])
    }),
    TEST_TIMEOUT_MS
  )

  it.effect("approve and reject set the onboarding status and are audited as operator:cli", () =>
    Effect.gen(function* () {
      const url = yield* dbUrl
      const tenantId = (yield* cli("tenants", "create", "--name", "Kano Textiles")).stdout.trim()
      // As the dashboard's POST /api/v1/dashboard/onboarding leaves it.
      yield* query(url, "UPDATE tenants SET onboarding_status = 'Submitted' WHERE id = $1", [tenantId])
      const approved = yield* cli("tenants", "approve", tenantId)
      expect(approved.code, shown(approved)).toBe(0)
      expect(approved.stdout.trim()).toBe(`${tenantId}: onboarding Approved (was Submitted)`)
      const rejected = yield* cli("tenants", "reject", tenantId)
      expect(rejected.code, shown(rejected)).toBe(0)
      expect(rejected.stdout.trim()).toBe(`${tenantId}: onboarding Rejected (was Approved)`)

      const [tenant] = yield* query<{ onboardingStatus: string }>(url, `SELECT onboarding_status AS "onboardingStatus" FROM tenants WHERE id = $1`, [tenantId])
      expect(tenant!.onboardingStatus).toBe("Rejected")
      const audit = yield* query<{ actor: string; action: string; details: unknown }>(
        url,
        "SELECT actor, action, details FROM audit_log WHERE tenant_id = $1 AND action LIKE 'onboarding.%' ORDER BY id",
        [tenantId]
      )
      expect(audit).toEqual([
        { actor: "operator:cli", action: "onboarding.approved", details: { previous: "Submitted" } },
        { actor: "operator:cli", action: "onboarding.rejected", details: { previous: "Approved" } }
      ])
      // A rejected tenant did submit once: approving it again needs no --force. --force is approve's alone.
      expect((yield* cli("tenants", "approve", tenantId)).stdout.trim()).toBe(`${tenantId}: onboarding Approved (was Rejected)`)
      const rejectForced = yield* cli("tenants", "reject", tenantId, "--force")
      expect(rejectForced.code, shown(rejectForced)).toBe(2)
      expect(rejectForced.stderr).toMatch(/unknown option --force/)
    }),
    TEST_TIMEOUT_MS
  )

  it.effect("approving a tenant that never submitted onboarding is refused without --force (nothing changed), and audited as forced with it", () =>
    Effect.gen(function* () {
      const url = yield* dbUrl
      const tenantId = (yield* cli("tenants", "create", "--name", "Onitsha Spare Parts")).stdout.trim()
      const onboardingAudit = () => query<{ action: string; details: unknown }>(
        url, "SELECT action, details FROM audit_log WHERE tenant_id = $1 AND action LIKE 'onboarding.%' ORDER BY id", [tenantId])
      const statusOf = () => Effect.map(
        query<{ s: string }>(url, "SELECT onboarding_status AS s FROM tenants WHERE id = $1", [tenantId]), (r) => r[0]!.s)

      const refused = yield* cli("tenants", "approve", tenantId)
      expect(refused.code, shown(refused)).toBe(1)
      expect(refused.stdout).toBe("")
      expect(refused.stderr.trim(), shown(refused)).toBe(
        `error: tenant ${tenantId} has not submitted onboarding (status NotStarted): there are no business details to approve, ` +
        `and approval unlocks live keys and live accounts. Nothing was changed. If you mean it, run: collections tenants approve ${tenantId} --force`
      )
      expect(yield* statusOf()).toBe("NotStarted")
      expect(yield* onboardingAudit()).toEqual([])

      const help = yield* cli("tenants", "approve", "--help")
      expect(help.stdout).toMatch(/collections tenants approve <tenantId> \[--force\]/)
      expect(help.stdout).toMatch(/--force\s+approve a tenant that never submitted onboarding/)

      const forced = yield* cli("tenants", "approve", tenantId, "--force")
      expect(forced.code, shown(forced)).toBe(0)
      expect(forced.stdout.trim()).toBe(`${tenantId}: onboarding Approved (was NotStarted, forced)`)
      expect(yield* statusOf()).toBe("Approved")
      expect(yield* onboardingAudit()).toEqual([{ action: "onboarding.approved", details: { previous: "NotStarted", forced: true } }])
      // Once approved, --force changes nothing and is not recorded.
      const again = yield* cli("tenants", "approve", tenantId, "--force")
      expect(again.stdout.trim()).toBe(`${tenantId}: onboarding Approved (unchanged)`)
      expect((yield* onboardingAudit())[1]).toEqual({ action: "onboarding.approved", details: { previous: "Approved" } })
    }),
    TEST_TIMEOUT_MS
  )

  it.effect("an unknown tenant is a clear error with exit code 1", () =>
    Effect.gen(function* () {
      for (const args of [["tenants", "approve", "ten_nope"], ["tenants", "reject", "ten_nope"], ["keys", "create", "--tenant", "ten_nope", "--mode", "test"]]) {
        const r = yield* cli(...args)
        expect(r.code, shown(r)).toBe(1)
        expect(r.stderr.trim(), shown(r)).toBe(`error: unknown tenant "ten_nope"`)
        expect(r.stdout).toBe("")
      }
    }),
    TEST_TIMEOUT_MS
  )

  it.effect("keys create: a test key at once; a live key only after approval; the secret printed is the one stored", () =>
    Effect.gen(function* () {
      const url = yield* dbUrl
      const tenantId = (yield* cli("tenants", "create", "--name", "Ibadan Books")).stdout.trim()

      const test = yield* cli("keys", "create", "--tenant", tenantId, "--mode", "test")
      expect(test.code, shown(test)).toBe(0)
      const clientId = /^clientId:\s+(\S+)$/m.exec(test.stdout)?.[1]
      const clientSecret = /^clientSecret:\s+(\S+)$/m.exec(test.stdout)?.[1]
      expect(clientId).toMatch(/^ck_test_/)
      expect(clientSecret).toMatch(/^sk_test_/)
      expect(test.stderr).toMatch(/shown only this once/)
      const [stored] = yield* query<{ secretHash: string; mode: string }>(url, `SELECT secret_hash AS "secretHash", mode FROM api_keys WHERE client_id = $1`, [clientId])
      expect(stored!.mode).toBe("test")
      expect(stored!.secretHash).not.toContain(clientSecret!)
      expect(yield* Effect.promise(() => verify(stored!.secretHash, clientSecret!))).toBe(true)

      const refused = yield* cli("keys", "create", "--tenant", tenantId, "--mode", "live")
      expect(refused.code, shown(refused)).toBe(1)
      expect(refused.stderr).toMatch(/requires approved onboarding; this tenant's onboarding is NotStarted/)
      expect(refused.stderr).toContain(`collections tenants approve ${tenantId}`)
      expect(refused.stdout).toBe("")

      expect((yield* cli("tenants", "approve", tenantId, "--force")).code).toBe(0)
      const live = yield* cli("keys", "create", "--tenant", tenantId, "--mode", "live", "--json")
      expect(live.code, shown(live)).toBe(0)
      const key = JSON.parse(live.stdout) as { id: string; mode: string; clientId: string; clientSecret: string; tenantId: string }
      expect(key).toMatchObject({ mode: "live", tenantId })
      expect(key.clientId).toMatch(/^ck_live_/)

      const keys = yield* query<{ mode: string }>(url, "SELECT mode FROM api_keys WHERE tenant_id = $1 ORDER BY created_at", [tenantId])
      expect(keys.map((k) => k.mode)).toEqual(["test", "live"])
      const audit = yield* query<{ action: string; mode: string }>(url, "SELECT action, mode FROM audit_log WHERE tenant_id = $1 AND action = 'api_key.created' ORDER BY id", [tenantId])
      expect(audit).toEqual([{ action: "api_key.created", mode: "test" }, { action: "api_key.created", mode: "live" }])
    }),
    TEST_TIMEOUT_MS
  )
})
