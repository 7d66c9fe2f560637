import { describe, expect, it } from "@effect/vitest"
import { admit, CLOSED, isOpen, onFailure, onSuccess } from "../../src/domain/Circuit.js"

const policy = { threshold: 3, cooldownMs: 1_000 }

describe("the provider circuit (pure)", () => {
  it("stays closed below the threshold and opens at it", () => {
    let s = CLOSED
    s = onFailure(s, 0, policy)
    s = onFailure(s, 1, policy)
    expect(admit(s, 2).allowed).toBe(true)
    s = onFailure(s, 2, policy)
    expect(isOpen(s, 3)).toBe(true)
    const refused = admit(s, 500)
    expect(refused).toMatchObject({ allowed: false, retryAt: 1_002 })
  })

  it("a success closes it and forgets the failures", () => {
    let s = onFailure(onFailure(CLOSED, 0, policy), 0, policy)
    s = onSuccess(s)
    expect(s).toEqual(CLOSED)
    s = onFailure(onFailure(s, 1, policy), 1, policy)
    expect(isOpen(s, 2)).toBe(false)
  })

  it("after the cool-down one trial goes through; others wait for it; its failure opens again, its success closes", () => {
    let s = onFailure(onFailure(onFailure(CLOSED, 0, policy), 0, policy), 0, policy)
    const trial = admit(s, 1_000)
    expect(trial.allowed).toBe(true)
    s = trial.state
    expect(admit(s, 1_001).allowed).toBe(false)
    const reopened = onFailure(s, 1_002, policy)
    expect(admit(reopened, 1_500).allowed).toBe(false)
    expect(admit(reopened, 2_002).allowed).toBe(true)
    expect(onSuccess(admit(reopened, 2_002).state)).toEqual(CLOSED)
  })
})
