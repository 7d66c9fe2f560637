import { expect } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as nodeCrypto from "node:crypto"
import { type Answer, call } from "./TestApp.js"

/** The password `signup()` uses for every Owner. */
export const OWNER_PASSWORD = "correct horse battery staple"

/**
 * An error answer is an RFC 9457 problem document: the status, content-type application/problem+json,
 * a stable snake_case `code` and a non-empty `message`.
 */
export const expectProblem = (r: Answer, status: number, code: string) => {
  const why = `${r.status} ${r.contentType} ${JSON.stringify(r.body)}`
  expect(r.status, why).toBe(status)
  expect(r.contentType, why).toMatch(/^application\/problem\+json\b/)
  expect(r.body, why).toMatchObject({ status, code })
  expect(r.body.code, why).toMatch(/^[a-z][a-z0-9_]*$/)
  expect(typeof r.body.message, why).toBe("string")
  expect(r.body.message.length, why).toBeGreaterThan(0)
  expect(typeof r.body.title, why).toBe("string")
}

/** A success answer with the status, shown with its body when it is not. */
export const expectStatus = (r: Answer, status: number) => {
  expect(r.status, `${r.status} ${JSON.stringify(r.body)}`).toBe(status)
}

/**
 * Approves the tenant's onboarding directly in the database. Approval is an operator act (the CLI's
 * `tenants approve`); the tests set it with SQL so they do not depend on the CLI.
 */
export const approve = (tenantId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE tenants SET onboarding_status = 'Approved' WHERE id = ${tenantId}`
  }).pipe(Effect.orDie)

export const login = (email: string, password: string, mode?: "test" | "live") =>
  call("POST", "/api/v1/dashboard/login", { json: mode === undefined ? { email, password } : { email, password, mode } })

/** Invites a dashboard user of the role and signs them in (live mode). */
export const inviteAndLogin = (ownerToken: string, role: "Admin" | "Member", suffix: string) =>
  Effect.gen(function* () {
    const email = `${role.toLowerCase()}-${suffix}@example.ng`
    const password = `${role} password ${suffix}`
    const invited = yield* call("POST", "/api/v1/dashboard/users", { token: ownerToken, json: { email, password, role } })
    expectStatus(invited, 201)
    expect(invited.body).toMatchObject({ email, role })
    const session = yield* login(email, password)
    expectStatus(session, 200)
    return { email, password, token: session.body.accessToken as string }
  })

/** Row count of a query, as a number. */
export const countRows = (query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ readonly n: unknown }>, unknown>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* query(sql)
    return Number(rows[0]!.n)
  }).pipe(Effect.orDie)

/** A dashboard user of the role invited by the Owner, with a token for each mode (`token` test, `liveToken` live). */
export const dashboardUser = (t: { readonly ownerToken: string }, role: "Admin" | "Member") =>
  Effect.gen(function* () {
    const invited = yield* inviteAndLogin(t.ownerToken, role, nodeCrypto.randomBytes(4).toString("hex"))
    const session = yield* login(invited.email, invited.password, "test")
    expectStatus(session, 200)
    return { liveToken: invited.token, token: session.body.accessToken as string }
  })
