import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { freePort, http, runCli, type Service, startService, tempDir } from "../support/Processes.js"
import { shown } from "../support/CliRuns.js"


/** The service as `npm start` runs it without DATABASE_URL and NATS_URL; stopped (SIGKILL) if the test did not stop it. */
const service = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => startService({ PORT: String(await freePort()), DATA_DIR: dataDir })),
    (s) => Effect.sync(() => s.child.exitCode === null && s.child.signalCode === null && s.child.kill("SIGKILL"))
  )

const answered = (what: string, r: { status: number; body: unknown }, status: number) =>
  expect(r.status, `${what}: ${r.status} ${JSON.stringify(r.body)}`).toBe(status)

describe("the service on its embedded defaults", () => {
  it.scopedLive(
    "boots on an empty DATA_DIR, serves the API, lets the CLI approve a tenant while it runs, and stops cleanly",
    () =>
      Effect.gen(function* () {
        const dataDir = tempDir("collections-boot-")
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dataDir, { recursive: true, force: true })))
        const svc: Service = yield* service(dataDir)
        const call = (method: string, url: string, opts: { token?: string; json?: unknown } = {}) =>
          Effect.promise(() => http(svc.baseUrl, method, url, opts))

        const signup = yield* call("POST", "/api/v1/dashboard/signup", {
          json: { businessName: "Lekki Bakery", email: "owner@lekki-bakery.ng", password: "correct horse battery staple" }
        })
        answered("signup", signup, 201)
        const tenantId: string = signup.body.tenantId
        const dashboard: string = signup.body.accessToken

        const testKey = yield* call("POST", "/api/v1/dashboard/api-keys", { token: dashboard, json: { mode: "test" } })
        answered("test key", testKey, 201)
        const token = yield* call("POST", "/api/v1/auth/token", { json: { clientId: testKey.body.clientId, clientSecret: testKey.body.clientSecret } })
        answered("token", token, 200)
        const account = yield* call("POST", "/api/v1/virtual-accounts", {
          token: token.body.accessToken,
          json: { accountRef: "order-1001", name: "Chiamaka Obi", expectedAmountKobo: 250000 }
        })
        answered("virtual account", account, 201)
        expect(account.body.nuban).toMatch(/^\d{10}$/)
        expect(account.body).toMatchObject({ accountRef: "order-1001", mode: "test", paymentState: "AwaitingPayment" })

        answered("live key before approval", yield* call("POST", "/api/v1/dashboard/api-keys", { token: dashboard, json: { mode: "live" } }), 403)

        // The tenant submits onboarding; the operator CLI, joining the embedded Postgres the running service serves
        // under the same DATA_DIR, approves it.
        const onboarding = yield* call("POST", "/api/v1/dashboard/onboarding", { token: dashboard, json: { legalName: "Lekki Bakery Ltd", rcNumber: "RC1234567" } })
        answered("onboarding", onboarding, 200)
        const approve = yield* Effect.promise(() => runCli(["tenants", "approve", tenantId], { DATA_DIR: dataDir }))
        expect(approve.code, shown(approve)).toBe(0)
        expect(approve.stdout.trim()).toBe(`${tenantId}: onboarding Approved (was Submitted)`)

        const me = yield* call("GET", "/api/v1/dashboard/me", { token: dashboard })
        answered("me", me, 200)
        expect(me.body.tenant).toMatchObject({ id: tenantId, onboardingStatus: "Approved" })
        const liveKey = yield* call("POST", "/api/v1/dashboard/api-keys", { token: dashboard, json: { mode: "live" } })
        answered("live key after approval", liveKey, 201)
        expect(liveKey.body.mode).toBe("live")

        // A key the CLI creates works against the running service: both read the keys under DATA_DIR.
        const cliKey = yield* Effect.promise(() => runCli(["keys", "create", "--tenant", tenantId, "--mode", "test", "--json"], { DATA_DIR: dataDir }))
        expect(cliKey.code, shown(cliKey)).toBe(0)
        const { clientId, clientSecret } = JSON.parse(cliKey.stdout) as { clientId: string; clientSecret: string }
        answered("token for the CLI's key", yield* call("POST", "/api/v1/auth/token", { json: { clientId, clientSecret } }), 200)

        svc.child.kill("SIGTERM")
        const exit = yield* Effect.promise(() => svc.exited).pipe(Effect.timeout("30 seconds"))
        expect(exit, svc.output()).toEqual({ code: 0, signal: null })
        // A clean stop closes PGlite and releases the data directory's lock file.
        expect(fs.existsSync(path.join(dataDir, "embedded-postgres.json"))).toBe(false)
      }),
    240_000
  )
})
