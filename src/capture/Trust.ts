/**
 * Which TLS certificates the capture stage trusts. Decided by code and the
 * operator's configuration only, never by the environment: verification is
 * always on (`rejectUnauthorized: true` overrides NODE_TLS_REJECT_UNAUTHORIZED),
 * and the trust anchors are Node's bundled Mozilla roots plus the operator's
 * `capture.caFile`, passed explicitly (so NODE_EXTRA_CA_CERTS and
 * `--use-openssl-ca` do not add anchors either).
 */
import { X509Certificate } from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as tls from "node:tls"
import * as Effect from "effect/Effect"
import { InvalidCaFile } from "../Errors.js"
import { errorCode, errorText } from "../internal/safeRead.js"

/** Largest CA file read, in bytes: a full public bundle is about 220 KiB. */
export const maxCaFileBytes = 1024 * 1024

/** Most certificates one CA file may hold. */
export const maxCaCertificates = 1_000

export interface TrustOptions {
  /** PEM text of extra CA certificates. */
  readonly ca?: string | ReadonlyArray<string> | undefined
  /** A PEM file of extra CA certificates, read when the capture stage starts. */
  readonly caFile?: string | undefined
}

const pemBlock = /-----BEGIN ([A-Z0-9 ]{1,64})-----([A-Za-z0-9+/=\s]{0,1048576}?)-----END \1-----/g

/** The certificates of one PEM text; anything else (a private key, garbage, no certificate) is refused. */
export const parsePem = (text: string): { readonly certificates: ReadonlyArray<string> } | { readonly problem: string } => {
  const certificates: Array<string> = []
  // Text outside the matched blocks must not hold a PEM marker: a broken block is refused, not skipped.
  let outside = 0
  const strayMarker = (gap: string) => gap.includes("-----BEGIN") || gap.includes("-----END")
  for (const match of text.matchAll(pemBlock)) {
    if (strayMarker(text.slice(outside, match.index))) return { problem: "holds a malformed PEM block" }
    outside = match.index + match[0].length
    if (match[1] !== "CERTIFICATE") {
      return { problem: `holds a ${match[1]} block; only CERTIFICATE blocks belong in a CA file` }
    }
    if (certificates.length === maxCaCertificates) return { problem: `holds more than ${maxCaCertificates} certificates` }
    certificates.push(match[0])
  }
  if (strayMarker(text.slice(outside))) return { problem: "holds a malformed PEM block" }
  if (certificates.length === 0) return { problem: "holds no PEM certificate" }
  for (const [index, pem] of certificates.entries()) {
    try {
      new X509Certificate(pem)
    } catch (error) {
      return { problem: `certificate ${index + 1} is not a valid X.509 certificate: ${errorText(error)}` }
    }
  }
  return { certificates }
}

/** Reads a CA file: a regular file within the size limit, not waited on if it is a FIFO. */
const readCaFile = (file: string) =>
  Effect.tryPromise({
    try: async () => {
      const handle = await fsp.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
      try {
        const st = await handle.stat()
        if (!st.isFile()) throw new Error("not a regular file")
        if (st.size > maxCaFileBytes) throw new Error(`${st.size} bytes exceeds the ${maxCaFileBytes} byte limit`)
        const bytes = Buffer.alloc(st.size)
        const { bytesRead } = await handle.read(bytes, 0, st.size, 0)
        if (bytesRead !== st.size) throw new Error("the file changed while being read")
        return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
      } finally {
        await handle.close()
      }
    },
    catch: (error) =>
      new InvalidCaFile({ path: file, detail: errorCode(error) === "ENOENT" ? "no such file" : errorText(error) })
  })

/** The extra CA certificates to trust (none when neither option is given), each checked. */
export const loadExtraCa = (options: TrustOptions): Effect.Effect<ReadonlyArray<string>, InvalidCaFile> =>
  Effect.gen(function*() {
    const certificates: Array<string> = []
    const add = (path: string | null, text: string) => {
      const parsed = parsePem(text)
      if ("problem" in parsed) return Effect.fail(new InvalidCaFile({ path, detail: parsed.problem }))
      certificates.push(...parsed.certificates)
      return Effect.void
    }
    if (options.caFile !== undefined) yield* add(options.caFile, yield* readCaFile(options.caFile))
    if (options.ca !== undefined) {
      const texts = typeof options.ca === "string" ? [options.ca] : options.ca
      for (const text of texts) {
        if (text.length > maxCaFileBytes) {
          return yield* new InvalidCaFile({ path: null, detail: `longer than ${maxCaFileBytes} characters` })
        }
        yield* add(null, text)
      }
    }
    if (certificates.length > maxCaCertificates) {
      return yield* new InvalidCaFile({ path: options.caFile ?? null, detail: `more than ${maxCaCertificates} certificates` })
    }
    if (certificates.length > 0) {
      // OpenSSL must accept them too, now rather than at the first connection.
      try {
        tls.createSecureContext({ ca: certificates })
      } catch (error) {
        return yield* new InvalidCaFile({ path: options.caFile ?? null, detail: `not usable by TLS: ${errorText(error)}` })
      }
    }
    return certificates
  })

/**
 * The TLS context of a capture stage: Node's bundled roots plus the extra CAs,
 * TLS 1.2 or later. Built once (about 70 ms: it parses every root), so a
 * connection does not re-parse the roots.
 */
export const secureContext = (extraCa: ReadonlyArray<string>): tls.SecureContext => {
  if (extraCa.length > 0) return createContext(extraCa)
  defaultContext ??= createContext([])
  return defaultContext
}

const createContext = (extraCa: ReadonlyArray<string>) =>
  tls.createSecureContext({ ca: [...tls.rootCertificates, ...extraCa], minVersion: "TLSv1.2" })

/** The context without extra CAs is the same for every capture stage of the process. */
let defaultContext: tls.SecureContext | undefined

/** Node's codes for a certificate that failed verification (OpenSSL's X509 errors and the host name check). */
export const certificateErrorCodes: ReadonlySet<string> = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_CRL",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECRYPT_CRL_SIGNATURE",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "CERT_SIGNATURE_FAILURE",
  "CRL_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "CRL_NOT_YET_VALID",
  "CRL_HAS_EXPIRED",
  "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
  "ERROR_IN_CRL_LAST_UPDATE_FIELD",
  "ERROR_IN_CRL_NEXT_UPDATE_FIELD",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_CHAIN_TOO_LONG",
  "CERT_REVOKED",
  "INVALID_CA",
  "PATH_LENGTH_EXCEEDED",
  "INVALID_PURPOSE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "HOSTNAME_MISMATCH",
  "ERR_TLS_CERT_ALTNAME_INVALID"
])
