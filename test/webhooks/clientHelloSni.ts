/**
 * Test helper: pull the SNI host name out of a raw TLS ClientHello, so a test
 * can check what name a client announced without needing a certificate.
 * Returns "incomplete" while more bytes are needed and undefined when the
 * hello carries no server_name extension.
 */
export const clientHelloSni = (buf: Buffer): string | undefined | "incomplete" => {
  // TLS record header: type(1) = 22 handshake, version(2), length(2).
  if (buf.length < 5) return "incomplete"
  if (buf[0] !== 22) return undefined
  const recordEnd = 5 + buf.readUInt16BE(3)
  if (buf.length < recordEnd) return "incomplete"
  // Handshake header: type(1) = 1 ClientHello, length(3).
  let at = 5
  if (buf[at] !== 1) return undefined
  at += 4
  at += 2 + 32 // client_version, random
  at += 1 + buf[at]! // session_id
  at += 2 + buf.readUInt16BE(at) // cipher_suites
  at += 1 + buf[at]! // compression_methods
  const extensionsEnd = at + 2 + buf.readUInt16BE(at)
  at += 2
  while (at + 4 <= extensionsEnd) {
    const type = buf.readUInt16BE(at)
    const length = buf.readUInt16BE(at + 2)
    at += 4
    if (type === 0) {
      // server_name_list length(2), name_type(1) = 0 host_name, length(2), name.
      const nameLength = buf.readUInt16BE(at + 3)
      return buf.subarray(at + 5, at + 5 + nameLength).toString("ascii")
    }
    at += length
  }
  return undefined
}
