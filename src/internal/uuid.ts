/**
 * Name-derived identifiers: the same name always gives the same id, so exporting the same evidence
 * twice gives the same graph nodes, annotations and WARC records.
 */
import { createHash } from "node:crypto"

/** A urn:uuid of a name: RFC 9562 version 8 (custom), here the first 122 bits of its SHA-256. */
export const uuidOf = (name: string): string => {
  const h = createHash("sha256").update(name, "utf8").digest()
  h[6] = (h[6]! & 0x0f) | 0x80
  h[8] = (h[8]! & 0x3f) | 0x80
  const x = h.subarray(0, 16).toString("hex")
  return `urn:uuid:${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`
}
