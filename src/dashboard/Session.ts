import { useEffect, useState } from "preact/hooks"
import { call, Failure, setUnauthorizedHandler } from "./Client.js"

/**
 * The signed-in session, kept in sessionStorage (this tab only; gone when it closes). A dashboard token acts in one
 * mode, chosen at login (`mode: test|live`), and login needs the password: so signing in (or signing up) mints both
 * modes' tokens at once, and the test/live switch swaps between them. When the other mode's token has expired, the
 * switch asks for the password again.
 *
 * Test-mode virtual accounts and the deposit simulator are API-plane operations (a test API key's token; a dashboard
 * token always provisions live accounts and may not simulate): the "sandbox key" is a test key's credentials, exchanged
 * for a token when needed. It is kept per user in this browser (localStorage, under the tenant's and user's ids), so
 * every tab and every sign-in of that user reuses one key instead of minting one per tab. The service shows a key's
 * secret once, at creation, and never again: the browser that created it is the only place that can keep it. Signing
 * out leaves it (the next sign-in of the same user reuses it); revoking the key on the API keys page forgets it.
 */

export type Mode = "test" | "live"
export type Role = "Owner" | "Admin" | "Member"
export type Onboarding = "NotStarted" | "Submitted" | "Approved" | "Rejected"

interface StoredToken {
  readonly accessToken: string
  readonly expiresAt: number
}

export interface Me {
  readonly tenant: { readonly id: string; readonly name: string; readonly onboardingStatus: Onboarding }
  readonly user: { readonly id: string; readonly email: string; readonly role: Role }
  readonly mode: Mode
}

export interface SessionState {
  readonly email: string
  readonly mode: Mode
  readonly tokens: Partial<Record<Mode, StoredToken>>
  readonly me: Me | null
  /** Why the last session ended (shown on the sign-in page). */
  readonly notice?: string
}

const KEY = "collections.dashboard.session"
const load = (): SessionState | null => {
  try {
    const raw = sessionStorage.getItem(KEY)
    return raw ? (JSON.parse(raw) as SessionState) : null
  } catch {
    return null
  }
}

let state: SessionState | null = load()
let endNotice: string | null = null
const listeners = new Set<() => void>()
const set = (next: SessionState | null) => {
  state = next
  if (next) sessionStorage.setItem(KEY, JSON.stringify(next))
  else sessionStorage.removeItem(KEY)
  for (const l of listeners) l()
}

export const session = () => state
export const takeEndNotice = () => {
  const n = endNotice
  endNotice = null
  return n
}

/** Re-renders the component whenever the session changes. */
export const useSession = (): SessionState | null => {
  const [, bump] = useState(0)
  useEffect(() => {
    const l = () => bump((n) => n + 1)
    listeners.add(l)
    return () => void listeners.delete(l)
  }, [])
  return state
}

const fresh = (t: StoredToken | undefined | null) => t !== undefined && t !== null && t.expiresAt - 30_000 > Date.now()

interface TokenAnswer {
  readonly accessToken: string
  readonly expiresIn: number
}
const stored = (t: TokenAnswer): StoredToken => ({ accessToken: t.accessToken, expiresAt: Date.now() + t.expiresIn * 1000 })

const loginMode = (email: string, password: string, mode: Mode) =>
  call((c) => c.dashboardPublic.login({ payload: { email, password, mode } }), { quiet401: true }).then(stored)

const fetchMe = (token: string): Promise<Me> => call((c) => c.dashboard.me(), { token })

/** Signs in: both modes' tokens, then who we are. Starts in `mode`. */
export const signIn = async (email: string, password: string, mode: Mode) => {
  const [test, live] = await Promise.all([loginMode(email, password, "test"), loginMode(email, password, "live")])
  const tokens = { test, live }
  const me = await fetchMe(tokens[mode].accessToken)
  set({ email, mode, tokens, me })
}

export const signUp = async (businessName: string, email: string, password: string) => {
  await call((c) => c.dashboardPublic.signup({ payload: { businessName, email, password } }))
  // New businesses start in test mode: live needs approved onboarding.
  await signIn(email, password, "test")
}

export const signOut = (notice?: string) => {
  if (notice) endNotice = notice
  set(null)
  location.hash = "#/login"
}

setUnauthorizedHandler((e) => {
  if (state) signOut(`Your session ended: ${e.message} Please sign in again.`)
})

/** The current mode's dashboard token. */
export const token = () => state?.tokens[state.mode]?.accessToken ?? null

/** Whether switching to `mode` can happen without the password. */
export const canSwitchTo = (mode: Mode) => fresh(state?.tokens[mode])

export const switchMode = async (mode: Mode, password?: string) => {
  if (!state) return
  let tokens = state.tokens
  if (!fresh(tokens[mode])) {
    if (password === undefined) throw new Failure("Enter your password to switch mode.")
    tokens = { ...tokens, [mode]: await loginMode(state.email, password, mode) }
  }
  const me = await fetchMe(tokens[mode]!.accessToken)
  set({ ...state, mode, tokens, me })
}

/** Reads `me` again (onboarding status after an operator approved it, for example). */
export const refreshMe = async () => {
  const t = token()
  if (!state || !t) return
  const me = await fetchMe(t)
  set({ ...state, me })
}

export interface SandboxKey {
  readonly keyId?: string
  readonly clientId: string
  readonly clientSecret: string
}
interface KeptSandbox {
  readonly key: SandboxKey
  readonly token: StoredToken | null
}

/** Where this user's sandbox key is kept: one entry per tenant and user, shared by every tab of this browser. */
const sandboxSlot = () => (state?.me ? `collections.dashboard.sandbox.${state.me.tenant.id}.${state.me.user.id}` : null)
const keptSandbox = (): KeptSandbox | null => {
  const slot = sandboxSlot()
  try {
    const raw = slot ? localStorage.getItem(slot) : null
    return raw ? (JSON.parse(raw) as KeptSandbox) : null
  } catch {
    return null
  }
}
const keepSandbox = (kept: KeptSandbox | null) => {
  const slot = sandboxSlot()
  if (!slot) return
  if (kept) localStorage.setItem(slot, JSON.stringify(kept))
  else localStorage.removeItem(slot)
  for (const l of listeners) l()
}

/** The sandbox key this user keeps in this browser, if any. */
export const sandboxKey = (): SandboxKey | null => keptSandbox()?.key ?? null

export const setSandboxKey = (key: SandboxKey | null) => keepSandbox(key ? { key, token: null } : null)

/** Forgets the kept sandbox key when it is the one revoked. */
export const forgetSandboxKey = (keyId: string, clientId?: string) => {
  const kept = keptSandbox()
  if (kept && (kept.key.keyId === keyId || (clientId !== undefined && kept.key.clientId === clientId))) keepSandbox(null)
}

/** A test API key's token for the sandbox operations, minted from the kept key (null when none is kept). */
export const sandboxToken = async (): Promise<string | null> => {
  const kept = keptSandbox()
  if (!kept) return null
  if (fresh(kept.token)) return kept.token!.accessToken
  const t = await call((c) => c.auth.token({ payload: { clientId: kept.key.clientId, clientSecret: kept.key.clientSecret } }), { quiet401: true })
    .catch((e: unknown) => {
      if ((e as { _tag?: string })._tag === "Unauthorized") {
        setSandboxKey(null)
        throw new Failure(`The sandbox key no longer works (${(e as Error).message}). Create or paste another test key.`, 401)
      }
      throw e
    })
  keepSandbox({ key: kept.key, token: stored(t) })
  return t.accessToken
}
