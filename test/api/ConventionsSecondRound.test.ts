import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { decimalKoboInJson } from "../../src/http/InputGuard.js"
import { distance, nearest } from "../../src/domain/Nearest.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp, sharedTenant } from "../support/TestApp.js"

/**
 * DESIGN.md, "API conventions, second round" (issue 34): every field error at once, "did you mean" for an unknown
 * field or query parameter, 400 unknown_parameter, a kobo field written with a decimal point, 405 with Allow.
 */
const VA = "/api/v1/virtual-accounts"

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("API conventions, second round", (it) => {
  const tenant = sharedTenant()

  it.effect("every field error at once: validation_failed lists each bad field in errors[]", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const r = yield* call("POST", VA, { token, json: { accountRef: "", name: 42, expectedAmountKobo: -5 } })
      expectProblem(r, 400, "validation_failed")
      const paths = (r.body.errors as Array<{ path: string }>).map((e) => e.path).sort()
      expect(paths).toEqual(["accountRef", "expectedAmountKobo", "name"])
      for (const p of paths) expect(r.body.message).toContain(p)
    }))

  it.effect("an unknown body field names the nearest known one (did you mean)", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const r = yield* call("POST", VA, { token, json: { accountRef: "dym-1", name: "Kemi Ade", expectedAmountKbo: 150000 } })
      expectProblem(r, 400, "unknown_field")
      expect(r.body.message).toContain('Did you mean "expectedAmountKobo" for "expectedAmountKbo"?')
      expect(r.body.errors).toEqual([{ path: "expectedAmountKbo", message: 'is not a field of this request; did you mean "expectedAmountKobo"?' }])
      // Nothing near: named without a guess.
      const far = yield* call("POST", VA, { token, json: { accountRef: "dym-2", name: "Kemi Ade", colour: "blue" } })
      expectProblem(far, 400, "unknown_field")
      expect(far.body.message).not.toContain("Did you mean")
      expectProblem(yield* call("GET", `${VA}/dym-1`, { token }), 404, "virtual_account_not_found")
    }))

  it.effect("an unknown query parameter is 400 unknown_parameter naming the allowed ones (and the nearest)", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const r = yield* call("GET", `${VA}?tkae=5`, { token })
      expectProblem(r, 400, "unknown_parameter")
      expect(r.body.message).toBe('Unknown query parameter "tkae": it takes "subMerchantRef", "take", "startingAfter". Did you mean "take" for "tkae"?')
      expect(r.body.errors).toEqual([{ path: "tkae", message: 'is not a query parameter of this endpoint; did you mean "take"?' }])
      // An endpoint that takes none says so; a known parameter still works.
      const none = yield* call("GET", "/api/v1/balance?mode=live", { token })
      expectProblem(none, 400, "unknown_parameter")
      expect(none.body.message).toBe('Unknown query parameter "mode": it takes no query parameters.')
      expectStatus(yield* call("GET", `${VA}?take=5`, { token }), 200)
      // Checked before authentication would matter? No: the parameter check runs first, for any caller.
      expectProblem(yield* call("GET", `${VA}?tkae=5`), 400, "unknown_parameter")
      // Outside /api/ (the payer's page, probes) links may carry what they like.
      expectStatus(yield* call("GET", "/healthz?probe=1"), 200)
    }))

  it.effect("a kobo field written with a decimal point is 400 'did you send naira?', though 1500.00 parses to an integer", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const r = yield* call("POST", VA, { token, rawBody: '{"accountRef":"naira-1","name":"Kemi Ade","expectedAmountKobo":1500.00}' })
      expectProblem(r, 400, "validation_failed")
      expect(r.body.errors).toEqual([{ path: "expectedAmountKobo", message: expect.stringContaining("did you send naira?") }])
      expect(r.body.errors[0].message).toContain("(1500.00)")
      // An exponent is refused alike; an integer is taken.
      expectProblem(yield* call("POST", VA, { token, rawBody: '{"accountRef":"naira-2","name":"Kemi Ade","expectedAmountKobo":15e4}' }), 400, "validation_failed")
      expectProblem(yield* call("GET", `${VA}/naira-1`, { token }), 404, "virtual_account_not_found")
      expectStatus(yield* call("POST", VA, { token, rawBody: '{"accountRef":"naira-3","name":"Kemi Ade","expectedAmountKobo":150000}' }), 201)
    }))

  it("the raw-text kobo check: every such field, nested too; a string holding the words is not a field", () => {
    expect(decimalKoboInJson('{"amountKobo": 100}')).toBeUndefined()
    expect(decimalKoboInJson('{"amountKobo": 1.5, "legs": [{"flatKobo": 2E3}], "note": "amountKobo: 3.5"}')?.errors.map((e) => e.path)).toEqual(["amountKobo", "flatKobo"])
    expect(decimalKoboInJson('{"note": "{\\"amountKobo\\": 1.5}"}')).toBeUndefined()
    expect(decimalKoboInJson('{"minRiskScore": 1.5}')).toBeUndefined()
  })

  it.effect("a known path asked with another method is 405 with Allow; an unknown path stays 404", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const r = yield* call("PUT", VA, { token, json: {} })
      expectProblem(r, 405, "method_not_allowed")
      expect(r.headers["allow"]).toBe("GET, POST")
      expect(r.body.message).toBe("PUT is not allowed on /api/v1/virtual-accounts; it answers GET, POST.")
      const one = yield* call("POST", `${VA}/some-ref`, { token, json: {} })
      expectProblem(one, 405, "method_not_allowed")
      expect(one.headers["allow"]).toBe("DELETE, GET, PATCH")
      expectProblem(yield* call("DELETE", "/api/v1/balance"), 405, "method_not_allowed")
      expectProblem(yield* call("GET", "/api/v1/no-such-thing", { token }), 404, "route_not_found")
    }))

  it("did you mean: edit distance, case ignored, and only for a near slip", () => {
    expect(distance("tkae", "take")).toBe(1)
    expect(distance("kitten", "sitting")).toBe(3)
    expect(distance("AccountRef", "accountRef")).toBe(0)
    expect(nearest("expectedAmountKbo", ["accountRef", "expectedAmountKobo", "name"])).toBe("expectedAmountKobo")
    expect(nearest("colour", ["accountRef", "name"])).toBeUndefined()
    expect(nearest("nam", ["name", "email"])).toBe("name")
  })
})
