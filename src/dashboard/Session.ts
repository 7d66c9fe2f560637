import { useEffect, useState } from "preact/hooks"
import { ApiError, request, setUnauthorizedHandler } from "./Api.js"

/**
 * The signed-in session, kept in sessionStorage (this tab only; gone when it closes). A dashboard token acts in one
 * mode, chosen at login (`mode: test|live`), and login needs the password: so signing in (or signing up) mints both
 * modes' tokens at once, and the test/live switch swaps between them. When the other mode's token has expired, the
 * switch asks for the password again.
 *
 * Test-mode virtual accounts and the deposit simulator are API-plane operations (a test API key's token; a dashboard
 * token always provisions live accounts and may not simulate): the "sandbox key" is a test key's credentials that this
 * tab keeps (the one just created on the API keys page, or one pasted in), exchanged for a token when needed.
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
  readonly sandboxKey: { readonly clientId: string; readonly clientSecret: string } | null
  readonly sandboxToken: StoredToken | null
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
  request<TokenAnswer>("POST", "/api/v1/dashboard/login", { body: { email, password, mode }, quiet401: true }).then(stored)

const fetchMe = (token: string) => request<Me>("GET", "/api/v1/dashboard/me", { token })

/** Signs in: both modes' tokens, then who we are. Starts in `mode`. */
export const signIn = async (email: string, password: string, mode: Mode) => {
  const [test, live] = await Promise.all([loginMode(email, password, "test"), loginMode(email, password, "live")])
  const tokens = { test, live }
  const me = await fetchMe(tokens[mode].accessToken)
  set({ email, mode, tokens, me, sandboxKey: null, sandboxToken: null })
}

export const signUp = async (businessName: string, email: string, password: string) => {
  await request("POST", "/api/v1/dashboard/signup", { body: { businessName, email, password } })
  // New businesses start in test mode: live needs approved onboarding.
  await signIn(email, password, "test")
}

export const signOut = (notice?: string) => {
  if (notice) endNotice = notice
  set(null)
  location.hash = "#/login"
}

setUnauthorizedHandler((e: ApiError) => {
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
    if (password === undefined) throw new ApiError(401, "password_needed", "Enter your password to switch mode.", [])
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

export const setSandboxKey = (key: { clientId: string; clientSecret: string } | null) => {
  if (state) set({ ...state, sandboxKey: key, sandboxToken: null })
}

/** A test API key's token for the sandbox operations, minted from the kept key (null when none is kept). */
export const sandboxToken = async (): Promise<string | null> => {
  if (!state?.sandboxKey) return null
  if (fresh(state.sandboxToken)) return state.sandboxToken!.accessToken
  const t = await request<TokenAnswer>("POST", "/api/v1/auth/token", { body: state.sandboxKey, quiet401: true }).catch((e: ApiError) => {
    if (e.status === 401) {
      setSandboxKey(null)
      throw new ApiError(401, e.code, `The sandbox key no longer works (${e.message}). Create or paste another test key.`, [])
    }
    throw e
  })
  set({ ...state, sandboxToken: stored(t) })
  return t.accessToken
}
