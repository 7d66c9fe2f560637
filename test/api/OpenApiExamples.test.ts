import { HttpApi } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Effect, Either, Option, ParseResult, Schema, type SchemaAST } from "effect"
import { PROBLEM_CODES, type ProblemCode } from "../../src/contract/Problems.js"
import { Api } from "../../src/http/Api.js"
import { ProblemDetails } from "../../src/http/Problem.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"

/**
 * The OpenAPI document as a reader and "Try it out" use it (DESIGN.md, "API conventions, second round"): every
 * operation carries a request example (when it takes a body) and a response example per documented status, each
 * example decodes with the endpoint's own Schema, every schema property says what it holds, dates carry their format,
 * tags are words and `servers` is set. The checks walk whatever the document holds, so a new endpoint is checked the
 * day it is added; each failure names the operation and what to add where.
 */

type Spec = Record<string, any>
type Doc = { paths: Record<string, Record<string, Spec>>; components: { schemas: Record<string, Spec> }; tags: Array<Spec>; servers?: Array<Spec> }

const WHERE_EXAMPLES = "services/<capability>/<Capability>Examples.ts (the manifest's `examples`; see src/contract/OperationExample.ts)"
const WHERE_DESCRIPTIONS = "a `description` annotation on the Schema field (src/contract/<Capability>.ts or the group's own schema)"

/** The endpoint's own schemas, by operationId (`group.endpoint`): the JSON body it reads and each success status's body. */
interface Endpoint { readonly payload: SchemaAST.AST | undefined; readonly successes: ReadonlyMap<number, SchemaAST.AST | undefined> }
const endpoints = new Map<string, Endpoint>()
HttpApi.reflect(Api, {
  onGroup: () => {},
  onEndpoint: ({ group, endpoint, payloads, successes }) => {
    endpoints.set(`${group.identifier}.${endpoint.name}`, {
      payload: payloads.get("application/json")?.ast,
      successes: new Map([...successes].map(([status, s]) => [status, Option.getOrUndefined(s.ast)]))
    })
  }
})

/** Decodes an example as the server would: unknown fields refused, every issue reported. */
const decodeIssues = (ast: SchemaAST.AST, example: unknown): string | undefined => {
  const result = Schema.decodeUnknownEither(Schema.make(ast), { onExcessProperty: "error", errors: "all" })(example)
  return Either.isLeft(result) ? ParseResult.TreeFormatter.formatErrorSync(result.left) : undefined
}

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, op, id: `${method.toUpperCase()} ${path} (${op.operationId})` })))

const resolve = (doc: Doc, s: Spec | undefined): Spec | undefined =>
  s?.$ref ? resolve(doc, doc.components.schemas[s.$ref.split("/").pop()!]) : s

/** Every object property of every schema in the document, with where it is: `(where, name, property schema)`. */
const properties = (doc: Doc) => {
  const out: Array<[string, string, Spec]> = []
  const walk = (node: unknown, where: string): void => {
    if (Array.isArray(node)) return node.forEach((n) => walk(n, where))
    if (node === null || typeof node !== "object") return
    const o = node as Spec
    for (const [k, v] of Object.entries(o)) {
      if (k === "properties" && v && typeof v === "object" && !Array.isArray(v)) {
        for (const [name, prop] of Object.entries(v as Spec)) {
          out.push([where, name, prop])
          walk(prop, `${where}.${name}`)
        }
      } else if (k !== "example" && k !== "examples") walk(v, where)
    }
  }
  for (const [name, schema] of Object.entries(doc.components.schemas)) walk(schema, `schema ${name}`)
  for (const { op, id } of operations(doc)) {
    walk(op.requestBody, `${id} request body`)
    walk(op.responses, `${id} response`)
  }
  return out
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/

/** The format a (possibly nullable or referenced) property schema declares. */
const formatOf = (doc: Doc, s: Spec | undefined): string | undefined => {
  const r = resolve(doc, s)
  if (r?.format) return r.format
  const branches: Array<Spec> = r?.anyOf ?? r?.oneOf ?? []
  return branches.map((b) => formatOf(doc, b)).find((f) => f !== undefined)
}

/** Walks an example beside its schema, reporting a string that holds a date where the schema declares no format. */
const datesWithoutFormat = (doc: Doc, schema: Spec | undefined, value: unknown, where: string, out: Array<string>): void => {
  const s = resolve(doc, schema)
  if (s === undefined) return
  if (typeof value === "string") {
    const wanted = ISO_DATE_TIME.test(value) ? "date-time" : ISO_DATE.test(value) ? "date" : undefined
    if (wanted && formatOf(doc, s) !== wanted) out.push(`${where}: the example holds ${JSON.stringify(value)} but the schema's format is ${formatOf(doc, s) ?? "missing"}; declare "${wanted}"`)
    return
  }
  const branches: Array<Spec> = [s, ...(s.anyOf ?? []), ...(s.oneOf ?? [])].map((b) => resolve(doc, b)!)
  if (Array.isArray(value)) {
    const items = branches.find((b) => b?.items)?.items
    value.forEach((v, i) => datesWithoutFormat(doc, items, v, `${where}[${i}]`, out))
  } else if (value !== null && typeof value === "object") {
    const props = branches.find((b) => b?.properties)?.properties ?? {}
    for (const [k, v] of Object.entries(value)) datesWithoutFormat(doc, props[k], v, `${where}.${k}`, out)
  }
}

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("the contract document's examples and descriptions", (it) => {
  const spec = Effect.cached(
    Effect.gen(function* () {
      const r = yield* call("GET", "/swagger/v1/swagger.json")
      expectStatus(r, 200)
      return r.body as Doc
    })
  ).pipe(Effect.runSync)

  it.effect("every operation has a request example (when it takes a body) and a response example per documented status", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const missing: Array<string> = []
      for (const { op, id } of operations(doc)) {
        for (const [type, media] of Object.entries(op.requestBody?.content ?? {}) as Array<[string, Spec]>) {
          if (media.example === undefined) missing.push(`${id}: no request example (${type}): add \`request\` to its entry in ${WHERE_EXAMPLES}`)
        }
        for (const [status, response] of Object.entries(op.responses) as Array<[string, Spec]>) {
          for (const [type, media] of Object.entries(response.content ?? {}) as Array<[string, Spec]>) {
            if (media.example !== undefined) continue
            missing.push(Number(status) >= 400
              ? `${id}: no ${status} example: add \`${status}: problem("<code>", "<message>")\` to its \`responses\` in ${WHERE_EXAMPLES}`
              : `${id}: no ${status} example (${type}): add \`${status}: <body>\` to its \`responses\` in ${WHERE_EXAMPLES}`)
          }
        }
      }
      expect(missing).toEqual([])
    }))

  it.effect("each example decodes with the endpoint's own Schema; each problem example carries a code of its status", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const wrong: Array<string> = []
      for (const { op, id } of operations(doc)) {
        const endpoint = endpoints.get(op.operationId)
        if (endpoint === undefined) {
          wrong.push(`${id}: no endpoint of the Api has this operationId`)
          continue
        }
        const request = op.requestBody?.content?.["application/json"]?.example
        if (request !== undefined) {
          const issues = endpoint.payload ? decodeIssues(endpoint.payload, request) : "the endpoint declares no JSON payload"
          if (issues) wrong.push(`${id}: the request example does not decode:\n${issues}`)
        }
        for (const [status, response] of Object.entries(op.responses) as Array<[string, Spec]>) {
          for (const [type, media] of Object.entries(response.content ?? {}) as Array<[string, Spec]>) {
            if (media.example === undefined) continue
            if (Number(status) >= 400) {
              const issues = decodeIssues(ProblemDetails.ast, media.example)
              if (issues) wrong.push(`${id}: the ${status} example is not a problem document:\n${issues}`)
              const code = media.example.code as ProblemCode
              if (PROBLEM_CODES[code] !== Number(status)) wrong.push(`${id}: the ${status} example's code ${JSON.stringify(code)} is a ${PROBLEM_CODES[code] ?? "unknown"} code (src/contract/Problems.ts)`)
              if (media.example.status !== Number(status)) wrong.push(`${id}: the ${status} example says status ${media.example.status}`)
              continue
            }
            const ast = endpoint.successes.get(Number(status))
            if (ast === undefined) {
              wrong.push(`${id}: the ${status} example (${type}) has no success schema to decode with`)
              continue
            }
            const issues = decodeIssues(ast, media.example)
            if (issues) wrong.push(`${id}: the ${status} example does not decode:\n${issues}`)
          }
        }
      }
      expect(wrong).toEqual([])
    }))

  it.effect("every schema property has a description", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const missing = properties(doc)
        .filter(([, , prop]) => typeof prop.description !== "string" || prop.description.trim().length < 8)
        .map(([where, name]) => `${where}: field \`${name}\` has no description: add ${WHERE_DESCRIPTIONS}`)
      expect([...new Set(missing)]).toEqual([])
    }))

  it.effect("dates carry their format: `date-time` for timestamps, `date` for calendar dates", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const wrong: Array<string> = []
      // A field named as a moment (`createdAt`, `paidAt`) is a timestamp.
      for (const [where, name, prop] of properties(doc)) {
        if (/[a-z]At$/.test(name) && formatOf(doc, prop) !== "date-time") wrong.push(`${where}: field \`${name}\` is a timestamp; declare format "date-time"`)
      }
      // Any example string that holds a date sits in a field declaring that format.
      for (const { op, id } of operations(doc)) {
        const body = op.requestBody?.content?.["application/json"]
        if (body?.example !== undefined) datesWithoutFormat(doc, body.schema, body.example, `${id} request`, wrong)
        for (const [status, response] of Object.entries(op.responses) as Array<[string, Spec]>) {
          for (const media of Object.values(response.content ?? {}) as Array<Spec>) {
            if (media.example !== undefined) datesWithoutFormat(doc, media.schema, media.example, `${id} ${status}`, wrong)
          }
        }
      }
      expect([...new Set(wrong)]).toEqual([])
    }))

  it.effect("tags are human words (not group identifiers), each described; `servers` names this service", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const identifiers = new Set(Object.keys(Api.groups))
      const wrong: Array<string> = []
      for (const tag of doc.tags) {
        if (identifiers.has(tag.name) && !/^[A-Z]/.test(tag.name)) wrong.push(`tag ${tag.name}: a group identifier; annotate the group with OpenApi.Title (e.g. "Virtual accounts")`)
        if (!/^[A-Z][a-z-]*( [A-Za-z()-]+)*$/.test(tag.name)) wrong.push(`tag ${tag.name}: not words; annotate the group with OpenApi.Title`)
        if (typeof tag.description !== "string") wrong.push(`tag ${tag.name}: no description; annotate the group with OpenApi.Description`)
      }
      const names = new Set(doc.tags.map((t) => t.name))
      for (const { op, id } of operations(doc)) {
        for (const t of op.tags ?? []) if (!names.has(t)) wrong.push(`${id}: tag ${t} is not in the document's tags`)
      }
      expect(wrong).toEqual([])
      expect(doc.servers).toEqual(expect.arrayContaining([expect.objectContaining({ url: expect.any(String) })]))
      expect(doc.servers![0]!.url).toBe("/")
    }))

  it.effect("the API reference page at /docs carries the document with its examples for Try it out", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const r = yield* call("GET", "/docs")
      expectStatus(r, 200)
      const html = String(r.body)
      const embedded = /<script id="swagger-spec" type="application\/json">([\s\S]*?)<\/script>/.exec(html)
      expect(embedded, "the page embeds the OpenAPI document").not.toBeNull()
      const page = JSON.parse(embedded![1]!.replace(/\\u003c/gi, "<").trim()) as Doc
      // The page shows the same document as /swagger/v1/swagger.json: examples, servers and tag names included.
      expect(page).toEqual(doc)
      expect(page.paths["/api/v1/virtual-accounts"]!.post!.requestBody.content["application/json"].example).toMatchObject({ accountRef: expect.any(String) })
      expect(html).toContain("SwaggerUIBundle")
    }))
})
