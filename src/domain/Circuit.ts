/**
 * A circuit breaker as a pure state machine (the provider clients keep one per provider in a Ref): after `threshold`
 * failures in a row the circuit opens and calls fail at once for `cooldownMs`; then one trial call is let through
 * (half-open): its success closes the circuit, its failure opens it again for another cooldown.
 */
export interface CircuitPolicy {
  readonly threshold: number
  readonly cooldownMs: number
}

export interface CircuitState {
  /** Failures in a row since the last success. */
  readonly failures: number
  /** While `now < openUntil` every call fails fast; 0 when closed. */
  readonly openUntil: number
  /** A half-open trial call is in flight: others still fail fast until it answers. */
  readonly trialInFlight: boolean
}

export const CLOSED: CircuitState = { failures: 0, openUntil: 0, trialInFlight: false }

export const DEFAULT_CIRCUIT: CircuitPolicy = { threshold: 5, cooldownMs: 30_000 }

export type Admission =
  | { readonly allowed: true; readonly state: CircuitState }
  | { readonly allowed: false; readonly state: CircuitState; readonly retryAt: number }

/** Whether a call may go now, and the state after letting it (a trial takes the half-open slot). */
export const admit = (s: CircuitState, now: number): Admission => {
  if (s.openUntil === 0) return { allowed: true, state: s }
  if (now < s.openUntil || s.trialInFlight) return { allowed: false, state: s, retryAt: Math.max(s.openUntil, now) }
  return { allowed: true, state: { ...s, trialInFlight: true } }
}

export const onSuccess = (_s: CircuitState): CircuitState => CLOSED

/** A failure that says the provider is down (5xx, timeout, no connection): counts toward opening. */
export const onFailure = (s: CircuitState, now: number, policy: CircuitPolicy): CircuitState => {
  const failures = s.failures + 1
  const open = s.trialInFlight || failures >= policy.threshold
  return { failures, openUntil: open ? now + policy.cooldownMs : s.openUntil, trialInFlight: false }
}

export const isOpen = (s: CircuitState, now: number) => s.openUntil !== 0 && (now < s.openUntil || s.trialInFlight)
