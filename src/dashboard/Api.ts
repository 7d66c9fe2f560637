/**
 * The dashboard's calls: a small typed wrapper over fetch. The types come from the service's contract (type-only
 * imports, erased from the bundle); every failure becomes an ApiError carrying the problem+json's `message`, `code`
 * and per-field `errors`. Same origin only.
 */

export interface FieldError {
  readonly field?: string
  readonly path?: string
  readonly message: string
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: ReadonlyArray<FieldError>
  ) {
    super(message)
  }
}

export type Query = Record<string, string | number | boolean | undefined | null>

const queryString = (q: Query | undefined) => {
  if (!q) return ""
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== "") p.set(k, String(v))
  const s = p.toString()
  return s === "" ? "" : `?${s}`
}

const toFieldErrors = (errors: unknown): ReadonlyArray<FieldError> => {
  if (Array.isArray(errors)) {
    return errors.map((e) =>
      typeof e === "string" ? { message: e } : { field: e?.field ?? e?.name ?? (Array.isArray(e?.path) ? e.path.join(".") : e?.path), message: String(e?.message ?? JSON.stringify(e)) }
    )
  }
  if (errors && typeof errors === "object") {
    return Object.entries(errors as Record<string, unknown>).map(([field, m]) => ({ field, message: Array.isArray(m) ? m.join("; ") : String(m) }))
  }
  return []
}

/** Called when a call answers 401: the session is over (expired or revoked). */
let onUnauthorized: (e: ApiError) => void = () => {}
export const setUnauthorizedHandler = (f: (e: ApiError) => void) => {
  onUnauthorized = f
}

export const request = async <A>(
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  options: { readonly token?: string | null; readonly body?: unknown; readonly query?: Query; readonly quiet401?: boolean } = {}
): Promise<A> => {
  const headers: Record<string, string> = { accept: "application/json" }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  if (options.body !== undefined) headers["content-type"] = "application/json"
  let res: Response
  try {
    res = await fetch(`${path}${queryString(options.query)}`, {
      method,
      headers,
      credentials: "omit",
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
    })
  } catch {
    throw new ApiError(0, "network_error", "The service could not be reached. Check your connection and try again.", [])
  }
  if (res.status === 204) return undefined as A
  const text = await res.text()
  let json: any = undefined
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  if (!res.ok) {
    const message = typeof json?.message === "string" ? json.message : typeof json?.detail === "string" ? json.detail : `The service answered ${res.status}.`
    const err = new ApiError(res.status, typeof json?.code === "string" ? json.code : `http_${res.status}`, message, toFieldErrors(json?.errors))
    if (res.status === 401 && !options.quiet401) onUnauthorized(err)
    throw err
  }
  return json as A
}

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly hasMore: boolean
}
