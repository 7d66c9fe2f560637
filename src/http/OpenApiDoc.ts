import { FIELD_DOCS } from "../contract/FieldDocs.js"
import { PROBLEM_JSON, STATUS_TITLES } from "../contract/Problems.js"
import { describe, OPERATION_DOCS, OPERATION_EXAMPLES, PUBLIC_ACCESS } from "./OperationDocs.js"
import { problemExample } from "./ProblemExamples.js"

type Spec = Record<string, any>

const problem = (description: string) => ({ description, content: { [PROBLEM_JSON]: { schema: { $ref: "#/components/schemas/ProblemDetails" } } } })
const ERRORS: Readonly<Record<string, string>> = {
  "400": "Invalid input (validation_failed, unknown_field, unknown_parameter, invalid_text, malformed_request, unknown_starting_after).",
  "401": "Missing, malformed, expired or revoked credentials.",
  "403": "Wrong plane, role or mode for this operation.",
  "404": "No such object in this tenant and mode.",
  "409": "Conflicts with the object's current state or an earlier request with the same reference.",
  "501": "Not built yet.",
  "502": "The bank provider failed; retrying with the same reference is safe.",
  "503": "The service is stopping or its database is unavailable; retry."
}
const RECEIVER = /^\/(?:api\/v1\/)?webhooks\//
/**
 * The methods whose body the shared input checks look at (src/http/Problem.ts, before routing): any body on them may be
 * refused for its size (413) or, outside the provider receiver, its media type (415), whether or not the operation
 * reads one.
 */
const BODY_METHODS = new Set(["post", "put", "patch", "delete"])

/** Schema-library words the generator leaves behind: titles such as `maxLength(64)` or `int`, descriptions such as "a string that will be trimmed". */
const clean = (node: unknown, isInfo = false): void => {
  if (Array.isArray(node)) return node.forEach((n) => clean(n))
  if (node === null || typeof node !== "object") return
  const o = node as Spec
  if (!isInfo) delete o.title
  if (typeof o.description === "string" && /^an? [a-z]/.test(o.description)) delete o.description
  for (const [k, v] of Object.entries(o)) if (k !== "example") clean(v, k === "info")
}

/**
 * A property's description beside a `$ref` comes out of the generator as `{ allOf: [{ $ref }], description }`; OpenAPI
 * 3.1 allows the `$ref` itself to carry it, which every viewer reads.
 */
const collapseRefs = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(collapseRefs)
  if (node === null || typeof node !== "object") return
  const o = node as Spec
  if (Array.isArray(o.allOf) && o.allOf.length === 1 && Object.keys(o.allOf[0]).length === 1 && o.allOf[0].$ref) {
    o.$ref = o.allOf[0].$ref
    delete o.allOf
  }
  Object.values(o).forEach(collapseRefs)
}

/**
 * Every schema property without a description of its own gets the glossary's (src/contract/FieldDocs.ts): the entry for
 * `<context>.<field>` (context: the component schema's name, or the operationId for an inline schema), else `<field>`.
 */
const describeFields = (node: unknown, context: string): void => {
  if (Array.isArray(node)) return node.forEach((n) => describeFields(n, context))
  if (node === null || typeof node !== "object") return
  const o = node as Spec
  for (const [k, v] of Object.entries(o)) {
    if (k === "example" || k === "examples") continue
    if (k === "properties" && v && typeof v === "object" && !Array.isArray(v)) {
      for (const [name, prop] of Object.entries(v as Spec)) {
        const text = FIELD_DOCS[`${context}.${name}`] ?? FIELD_DOCS[name]
        if (prop && typeof prop === "object" && typeof prop.description !== "string" && text !== undefined) prop.description = text
      }
    }
    describeFields(v, context)
  }
}

/** The object a request body's schema describes: its `$ref` resolved, the object branch of a nullable body. */
const bodySchema = (spec: Spec, s: Spec | undefined): Spec | undefined => {
  if (s?.$ref) return bodySchema(spec, spec.components?.schemas?.[s.$ref.split("/").pop()])
  if (s?.anyOf) return bodySchema(spec, s.anyOf.find((b: Spec) => b.type !== "null"))
  return s
}

/**
 * Each operation's examples (the capabilities' `<Name>Examples.ts`, by operationId): the request body and a response
 * per documented status; a problem status the table leaves out gets its default (src/http/ProblemExamples.ts).
 */
const addExamples = (spec: Spec, path: string, op: Spec) => {
  const given = OPERATION_EXAMPLES[op.operationId] ?? {}
  const json = op.requestBody?.content?.["application/json"]
  if (json && given.request !== undefined) json.example = given.request
  const context = {
    path, access: OPERATION_DOCS[op.operationId]?.access, body: bodySchema(spec, json?.schema),
    query: (op.parameters ?? []).filter((p: Spec) => p.in === "query").map((p: Spec) => p.name as string)
  }
  for (const [status, response] of Object.entries(op.responses ?? {}) as Array<[string, Spec]>) {
    for (const [type, media] of Object.entries(response.content ?? {}) as Array<[string, Spec]>) {
      const example = type === PROBLEM_JSON
        ? problemExample(Number(status), given.responses?.[Number(status)], context)
        : given.responses?.[Number(status)]
      if (example !== undefined) media.example = example
    }
  }
}

/** Drops components no longer referenced (the generator's HttpApiDecodeError, Issue, the unused error classes). */
const prune = (spec: Spec) => {
  for (;;) {
    const text = JSON.stringify({ ...spec, components: { ...spec.components, schemas: {} } }) + JSON.stringify(spec.components.schemas)
    const unused = Object.keys(spec.components.schemas).filter((name) => !text.includes(`"#/components/schemas/${name}"`))
    if (unused.length === 0) return
    for (const name of unused) delete spec.components.schemas[name]
  }
}

/**
 * The OpenAPI document a user can learn from: each operation's summary, description and access (plane and role),
 * "Not built yet (501)" on what answers 501, 413/415 on every method a body may come with (a bodyless POST too: the
 * check runs before routing), and no generator artefacts.
 */
export const documentOperations = (spec: Spec): Spec => {
  for (const [path, item] of Object.entries(spec.paths ?? {}) as Array<[string, Spec]>) {
    for (const [method, op] of Object.entries(item) as Array<[string, Spec]>) {
      const d = OPERATION_DOCS[op.operationId]
      if (d) {
        op.summary = d.summary
        op.description = describe(d)
      } else if (op.summary && op.description && (op.security ?? []).length === 0) {
        // A public operation may document itself with OpenApi annotations on its endpoint.
        op.description = `${op.description}\n\n${PUBLIC_ACCESS}`
      }
      if (op.summary && op.responses?.["501"]) op.summary = `Not built yet (501): ${op.summary}`
      if (BODY_METHODS.has(method)) {
        op.responses["413"] = problem("The body is larger than 1 MiB (code payload_too_large).")
        if (!RECEIVER.test(path)) {
          op.responses["415"] = problem(op.requestBody
            ? "The body is not JSON (code unsupported_media_type)."
            : "A body was sent with a content type other than JSON (code unsupported_media_type): this operation takes no body, so send none.")
        }
      }
      for (const [status, response] of Object.entries(op.responses ?? {}) as Array<[string, Spec]>) {
        if (Number(status) >= 400) response.description = ERRORS[status] ?? response.description ?? STATUS_TITLES[Number(status)]
      }
      addExamples(spec, path, op)
    }
  }
  // Relative to the origin that served the document, so "Try it out" calls this very service.
  spec.servers = spec.servers ?? [{ url: "/", description: "This service (the origin that served this document)." }]
  clean(spec)
  for (const [name, schema] of Object.entries(spec.components?.schemas ?? {})) describeFields(schema, name)
  for (const item of Object.values(spec.paths ?? {}) as Array<Spec>) {
    for (const op of Object.values(item) as Array<Spec>) describeFields([op.requestBody, op.responses], op.operationId)
  }
  collapseRefs(spec)
  prune(spec)
  return spec
}
