/**
 * How transport failures of the capture stage become typed errors: a refusal
 * raised inside the guarded connector (address, certificate) keeps its own tag; anything else on the
 * wire is a `ConnectionFailed` with the cause chain as its detail.
 */
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type { SourceUrl } from "../Domain.js"
import { AddressRejected, type CaptureError, CertificateRejected, ConnectionFailed } from "../Errors.js"
import { AddressRefusedError, CertificateRefusedError } from "./Dispatcher.js"

/** Finds an error of the given class anywhere in a cause chain (bounded: chains are attacker-influenced). */
export const findCause = <A>(error: unknown, isA: (u: unknown) => u is A): A | undefined => {
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 10; depth++) {
    if (isA(current)) return current
    current = typeof current === "object" && current !== null && "cause" in current ? current.cause : undefined
  }
  return undefined
}

export const describeCause = (error: unknown): string => {
  const messages: Array<string> = []
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 10; depth++) {
    if (current instanceof Error) {
      const code = "code" in current && current.code !== undefined ? ` (${String(current.code)})` : ""
      if (current.message !== "" && !messages.includes(current.message + code)) messages.push(current.message + code)
    }
    current = typeof current === "object" && current !== null && "cause" in current ? current.cause : undefined
  }
  return messages.join(": ") || "transport error"
}

const isAddressRefused = (u: unknown): u is AddressRefusedError => u instanceof AddressRefusedError
const isCertificateRefused = (u: unknown): u is CertificateRefusedError => u instanceof CertificateRefusedError

/** The typed capture error for a failure of the request or of reading its body. */
export const transportError = (source: SourceUrl) => (error: HttpClientError.HttpClientError | Error): CaptureError => {
  const refused = findCause(error, isAddressRefused)
  if (refused !== undefined) {
    return new AddressRejected({ source, host: refused.host, address: refused.address, reason: refused.reason })
  }
  const certificate = findCause(error, isCertificateRefused)
  if (certificate !== undefined) {
    return new CertificateRejected({ source, host: certificate.host, code: certificate.code, detail: certificate.message })
  }
  return new ConnectionFailed({ source, detail: describeCause(error) })
}
