import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { newId } from "../../src/domain/Ids.js"
import type { Role } from "../../src/domain/Principal.js"
import { Conflict, Unauthorized } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { hashSecret, verifySecret } from "./Passwords.js"
import { Tenants } from "./Tenants.js"
import { Tokens } from "./Tokens.js"

export interface UserRow {
  readonly id: string
  readonly tenantId: string
  readonly email: string
  readonly role: Role
  readonly createdAt: Date
}

const isUniqueViolation = (e: unknown) =>
  typeof e === "object" && e !== null && "cause" in e && (e as { cause?: { code?: string } }).cause?.code === "23505"

const emailTaken = (email: string) =>
  new Conflict({ code: "email_taken", message: `A dashboard user with e-mail ${email} already exists.` })

/** Dashboard users: signup (tenant + Owner), login, and invitations. */
export class Users extends Effect.Service<Users>()("services/Users", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tenants = yield* Tenants
    const tokens = yield* Tokens

    const insertUser = (tenantId: string, email: string, passwordHash: string, role: Role) =>
      Effect.gen(function* () {
        const id = newId("usr")
        yield* sql`INSERT INTO users ${sql.insert({ id, tenantId, email: email.trim(), passwordHash, role })}`
        return { id, tenantId, email: email.trim(), role }
      })

    const signup = Effect.fn("Users.signup")(function* (input: { businessName: string; email: string; password: string }) {
      const passwordHash = yield* hashSecret(input.password)
      const { tenantId, user } = yield* sql.withTransaction(
        Effect.gen(function* () {
          const tenantId = yield* tenants.create(input.businessName.trim())
          const user = yield* insertUser(tenantId, input.email, passwordHash, "Owner")
          return { tenantId, user }
        })
      ).pipe(Effect.catchAll((e) => (isUniqueViolation(e) ? Effect.fail(emailTaken(input.email)) : Effect.die(e))))
      const token = yield* tokens.mint({ tenantId, mode: "live", plane: "dashboard", subjectId: user.id })
      return { tenantId, user: { id: user.id, email: user.email, role: user.role }, ...token }
    })

    const login = Effect.fn("Users.login")(function* (input: { email: string; password: string; mode: Mode }) {
      const rows = yield* sql<UserRow & { passwordHash: string }>`
        SELECT id, tenant_id, email, role, created_at, password_hash FROM users WHERE lower(email) = lower(${input.email.trim()})`.pipe(Effect.orDie)
      const user = rows[0]
      // Verify against a dummy hash when the user is unknown so timing does not reveal which e-mails exist.
      const ok = yield* verifySecret(user?.passwordHash ?? DUMMY_HASH, input.password)
      if (!user || !ok) return yield* new Unauthorized({ code: "invalid_credentials", message: "E-mail or password is wrong." })
      return yield* tokens.mint({ tenantId: user.tenantId, mode: input.mode, plane: "dashboard", subjectId: user.id })
    })

    const find = Effect.fn("Users.find")(function* (tenantId: string, userId: string) {
      const rows = yield* sql<UserRow>`SELECT id, tenant_id, email, role, created_at FROM users WHERE id = ${userId} AND tenant_id = ${tenantId}`
      return rows[0]
    }, Effect.orDie)

    const list = Effect.fn("Users.list")(function* (tenantId: string, page: PageRequest = {}) {
      const after = yield* cursorId(page, "id", (id) => sql<{ id: string }>`SELECT id FROM users WHERE tenant_id = ${tenantId} AND id = ${id}`)
      const limit = limitOf(page)
      const rows = yield* sql<UserRow>`SELECT id, tenant_id, email, role, created_at FROM users WHERE tenant_id = ${tenantId}
        ${after !== undefined ? sql`AND (created_at, id) < (SELECT created_at, id FROM users WHERE id = ${after})` : sql``}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`.pipe(Effect.orDie)
      return pageOf(rows, limit - 1)
    })

    const invite = Effect.fn("Users.invite")(function* (tenantId: string, input: { email: string; password: string; role: "Admin" | "Member" }) {
      const passwordHash = yield* hashSecret(input.password)
      return yield* insertUser(tenantId, input.email, passwordHash, input.role).pipe(
        Effect.catchAll((e) => (isUniqueViolation(e) ? Effect.fail(emailTaken(input.email)) : Effect.die(e)))
      )
    })

    return { signup, login, find, list, invite } as const
  })
}) {}

const DUMMY_HASH = "$argon2id$v=19$m=19456,t=2,p=1$FQ4JajyViP6aqGHDrBtNCA$0AFE97fkAuWv8rcB24lqjqowg3zJ+Yzi2KjWSg+L5bo"
