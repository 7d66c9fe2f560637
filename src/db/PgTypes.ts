import pg from "pg"

const INT8_OID = 20

/** int8 columns hold kobo and counters: parse them to numbers, refusing anything beyond the safe range. */
const parseInt8 = (text: string): number => {
  const n = Number(text)
  if (!Number.isSafeInteger(n)) throw new Error(`int8 value ${text} is outside the safe integer range`)
  return n
}

export const pgTypes = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser
}
