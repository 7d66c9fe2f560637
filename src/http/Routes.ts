import { HttpApi } from "@effect/platform"
import { Option, SchemaAST } from "effect"
import { nearest } from "../domain/Nearest.js"
import { RECEIVER_ROUTE } from "./Problem.js"

/**
 * The API's routes as a table read once from its HttpApi definition (method, path, the query parameters and body
 * fields each endpoint takes), for the conventions the router cannot give (DESIGN.md, "API conventions, second
 * round"): 405 with `Allow` for a known path and another method, 400 `unknown_parameter` for a query parameter the
 * endpoint does not take, and "did you mean" for a misspelt parameter or body field.
 */
export interface Route {
  readonly method: string
  readonly path: string
  readonly pattern: RegExp
  /** Segments that are parameters: among routes that match one URL, the router prefers the fewest. */
  readonly paramSegments: number
  /** The query parameters it takes (none when it declares no schema for them). */
  readonly queryParams: ReadonlyArray<string>
  /** The top-level fields of its JSON body (none without a body). */
  readonly bodyFields: ReadonlyArray<string>
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const namesOf = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  try {
    return SchemaAST.getPropertySignatures(ast).map((p) => String(p.name))
  } catch {
    return []
  }
}

/** The routes of an HttpApi definition (read once, when first asked). */
export const routeTable = (api: HttpApi.HttpApi.Any): RouteTable => {
  let routes: ReadonlyArray<Route> | undefined
  return { routes: () => (routes ??= read(api)) }
}
export interface RouteTable {
  readonly routes: () => ReadonlyArray<Route>
}

const read = (api: HttpApi.HttpApi.Any): ReadonlyArray<Route> => {
  const routes: Array<Route> = []
  HttpApi.reflect(api as HttpApi.HttpApi<string, never, never, never>, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, payloads }) => {
      const segments = endpoint.path.split("/")
      const body = payloads.get("application/json")
      routes.push({
        method: endpoint.method,
        path: endpoint.path,
        pattern: new RegExp(`^${segments.map((s) => (s.startsWith(":") ? "[^/]+" : escape(s))).join("/")}/?$`),
        paramSegments: segments.filter((s) => s.startsWith(":")).length,
        queryParams: Option.match(endpoint.urlParamsSchema, { onNone: () => [], onSome: (s) => namesOf(s.ast) }),
        bodyFields: body === undefined ? [] : namesOf(body.ast)
      })
    }
  })
  return routes
}

/** The path of a request URL, without its query. */
const pathOf = (url: string) => url.split("?")[0]!.split("#")[0]!

/** The methods the API serves on this path (empty for a path it does not know). */
export const allowedMethods = (table: RouteTable, url: string): ReadonlyArray<string> => {
  const path = pathOf(url)
  return [...new Set(table.routes().filter((r) => r.pattern.test(path)).map((r) => r.method))].sort()
}

/** The endpoint the router gives this method and path (static segments before parameters), if any. */
export const routeFor = (table: RouteTable, method: string, url: string): Route | undefined => {
  const path = pathOf(url)
  let best: Route | undefined
  for (const r of table.routes()) {
    if (r.method === method && r.pattern.test(path) && (best === undefined || r.paramSegments < best.paramSegments)) best = r
  }
  return best
}

/** The query parameter names of a URL (percent-decoded; a malformed one as written). */
const queryNames = (url: string): ReadonlyArray<string> => {
  const q = url.indexOf("?")
  if (q < 0) return []
  return [...new Set(url.slice(q + 1).split("&").filter((p) => p !== "").map((p) => {
    const raw = p.split("=")[0]!
    try {
      return decodeURIComponent(raw.replace(/\+/g, " "))
    } catch {
      return raw
    }
  }))]
}

/**
 * 400 `unknown_parameter` when the endpoint for this method and path does not take one of the query's parameters;
 * undefined when it takes them all, or the path is not an endpoint (the router answers that). Only under /api/ and not
 * on the provider receiver: the payer's page, probes and providers' callbacks take what links and senders add.
 */
export const unknownParameters = (table: RouteTable, method: string, url: string) => {
  if (!url.includes("?") || !url.startsWith("/api/") || RECEIVER_ROUTE.test(url)) return undefined
  const route = routeFor(table, method, url)
  if (route === undefined) return undefined
  const unknown = queryNames(url).filter((n) => !route.queryParams.includes(n))
  if (unknown.length === 0) return undefined
  const takes = route.queryParams.length === 0
    ? "it takes no query parameters"
    : `it takes ${route.queryParams.map((p) => JSON.stringify(p)).join(", ")}`
  const hints = unknown.flatMap((name) => {
    const near = nearest(name, route.queryParams)
    return near === undefined ? [] : [{ name, near }]
  })
  return {
    code: "unknown_parameter" as const,
    message: `Unknown query parameter${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => JSON.stringify(n)).join(", ")}: ${takes}.` +
      hints.map((h) => ` Did you mean ${JSON.stringify(h.near)} for ${JSON.stringify(h.name)}?`).join(""),
    errors: unknown.map((name) => {
      const near = hints.find((h) => h.name === name)?.near
      return { path: name, message: `is not a query parameter of this endpoint${near ? `; did you mean ${JSON.stringify(near)}?` : ""}` }
    })
  }
}
