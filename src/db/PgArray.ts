/**
 * Postgres array literals for the hot statements' array parameters (`= ANY($1::bigint[])`, `unnest($1::text[], ...)`),
 * built here in one pass instead of by the pg driver, which runs every element through its general value preparation
 * and two regular-expression replaces; that was a visible share of the
 * reconciler thread's CPU (docs/performance.md).
 * The text is the same literal the driver would send, so Postgres reads exactly the same values.
 */

const NEEDS_ESCAPE = /["\\]/
const ESCAPED = /["\\]/g

/** One element of an array literal: quoted, `"` and `\` escaped (inside quotes every other character stands for itself). */
export const quotedElement = (v: string): string => `"${NEEDS_ESCAPE.test(v) ? v.replace(ESCAPED, "\\$&") : v}"`

/** `{"a","b",NULL}`: every element quoted, `"` and `\` escaped; null is SQL NULL (the string "NULL" stays a string). */
export const textArray = (values: ReadonlyArray<string | null>): string => {
  // Usually no element is null or needs escaping: one join, not a string per element.
  let plain = true
  for (let i = 0; i < values.length && plain; i++) {
    const v = values[i]!
    if (v === null || NEEDS_ESCAPE.test(v)) plain = false
  }
  if (plain) return values.length === 0 ? "{}" : `{"${values.join('","')}"}`
  let out = "{"
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!
    if (i > 0) out += ","
    out += v === null ? "NULL" : quotedElement(v)
  }
  return `${out}}`
}

/** `{1,2,3}` for int4[] / int8[] parameters; only integers (a kobo amount or an id is never anything else). */
export const integerArray = (values: ReadonlyArray<number>): string => {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!
    if (!Number.isSafeInteger(v)) throw new Error(`integerArray: ${v} is not a safe integer`)
  }
  return `{${values.join(",")}}`
}

/**
 * The literal of an array parameter of any statement (PreparingClient, src/db/PreparedStatements.ts): `textArray` when
 * every element is a string or null, `integerArray` when every element is a safe integer; undefined for anything else
 * (nested arrays, dates, booleans, fractions, mixed), which the driver serialises itself. The driver's serialisation
 * of an array allocated about 3 KB per deposit on the service's main thread in the consumers' id and key arrays
 * (issue 33: an allocation profile of the bench, `arrayString` in pg/lib/utils.js).
 */
export const arrayLiteral = (values: ReadonlyArray<unknown>): string | undefined => {
  let texts = true
  let integers = true
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (texts && v !== null && typeof v !== "string") texts = false
    if (integers && !(typeof v === "number" && Number.isSafeInteger(v))) integers = false
    if (!texts && !integers) return undefined
  }
  return texts ? textArray(values as ReadonlyArray<string | null>) : integerArray(values as ReadonlyArray<number>)
}

/**
 * Arrays of every elements kind the statements pass (V8 keeps small integers, integers past 2^31, strings and nulls,
 * and their holey and frozen variants, in arrays of different hidden classes), each seen once at load, before V8
 * optimises these functions: their loops' property loads then start out generic. Without it each kind met for the
 * first time under load deoptimised them, and every statement builder they had been inlined into, which V8 then
 * compiled again: 25 of the service's 177 deoptimisations in a bench run, the most at any one place (issue 33;
 * docs/performance.md, "Deoptimisations").
 */
export const ELEMENTS_KIND_SAMPLES: ReadonlyArray<ReadonlyArray<unknown>> = (() => {
  const holeySmi = new Array<unknown>(1)
  holeySmi[0] = 1
  const holeyDouble = new Array<unknown>(1)
  holeyDouble[0] = 2 ** 40
  const holey = new Array<unknown>(1)
  holey[0] = "a"
  return [[], [1], [2 ** 40], [1.5], ["a"], [null], ["a", null], [1, "a"], holeySmi, holeyDouble, holey, Object.freeze(["a"]), Object.freeze([1])]
})()
for (const sample of ELEMENTS_KIND_SAMPLES) arrayLiteral(sample)
for (const sample of [[], ["a"], ["a", null], Object.freeze(["a"])] as ReadonlyArray<ReadonlyArray<string | null>>) textArray(sample)
for (const sample of [[], [1], [2 ** 40], Object.freeze([1])] as ReadonlyArray<ReadonlyArray<number>>) integerArray(sample)
