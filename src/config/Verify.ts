/**
 * `verify`: the verification policy (facts, mode, deadline, matching, ambiguity, hidden text,
 * boundaries) and the capture attestations it checks against trusted keys.
 */
import * as Schema from "effect/Schema"
import { createPublicKey } from "node:crypto"
import { Mode } from "../Domain.js"
import { keyIdOf } from "../internal/keyId.js"
import { intBetween, strict } from "./Common.js"

export const maxFactsLimit = 10_000

/** The overall deadline of one verification (reading captures and searching them). */
export const verifyLimits = {
  timeoutMs: { min: 1, max: 600_000, default: 30_000 }
} as const

/** Most keys `verify.trustedKeys` holds (each may cost one Ed25519 check per capture). */
export const maxTrustedKeys = 16

const pemPublicKeyHeader = "-----BEGIN PUBLIC KEY-----"

/** Whether a `verify.trustedKeys` value is the key itself (SPKI PEM) rather than a file naming it. */
export const isPemKey = (value: string): boolean => value.trimStart().startsWith(pemPublicKeyHeader)

/** Why an inline PEM key cannot be the key `keyid` names, or `undefined`. */
const inlineKeyProblem = (keyid: string, pem: string): string | undefined => {
  try {
    const key = createPublicKey({ key: pem, format: "pem" })
    if (key.asymmetricKeyType !== "ed25519") return `is a ${key.asymmetricKeyType ?? "non-asymmetric"} key, not Ed25519`
    const actual = keyIdOf(key)
    return actual === keyid ? undefined : `is the key with id ${actual}, not ${keyid}`
  } catch {
    return "is not a PEM public key (SPKI)"
  }
}

/**
 * `verify.resultSigning`: the Ed25519 key the service signs verification results with when a
 * request asks (`?sign=1`, docs/signatures.md, "Signed results"). `keyFile`: the operator's
 * Ed25519 private key (PKCS#8 PEM; the key itself is never in the configuration), resolved against
 * pipeline.json's directory, read and checked when `serve` starts.
 *
 * @since 0.4.0
 */
export const ResultSigning = Schema.Struct({
  keyFile: Schema.String.pipe(
    Schema.filter((s) => (s.length >= 1 && s.length <= 4096) || "must be a path of 1 to 4096 characters")
  )
}).annotations({ ...strict, identifier: "ResultSigning" })
export type ResultSigning = typeof ResultSigning.Type

/**
 * `verify.trustedKeys`: key id (SHA-256 hex of the key's DER SubjectPublicKeyInfo, as envelopes name
 * it) → the Ed25519 public key, either SPKI PEM text or a file holding it (resolved against
 * pipeline.json's directory when the configuration is loaded). Several keys: a rotation.
 */
export const TrustedKeys = Schema.Record({
  key: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/, { message: () => "a key id is the 64 hex digits of the key's SHA-256" })),
  value: Schema.String.pipe(Schema.maxLength(8192), Schema.minLength(1))
}).pipe(
  Schema.filter((keys) => {
    const entries = Object.entries(keys)
    if (entries.length > maxTrustedKeys) return `must hold at most ${maxTrustedKeys} keys, got ${entries.length}`
    for (const [keyid, value] of entries) {
      if (!isPemKey(value)) continue
      const problem = inlineKeyProblem(keyid, value)
      if (problem !== undefined) return { path: [keyid], message: `the key ${problem}` }
    }
    return true
  })
)

export const VerifyOptions = Schema.Struct({
  maxFacts: Schema.optional(intBetween(1, maxFactsLimit)),
  mode: Schema.optional(Mode),
  timeoutMs: Schema.optional(intBetween(verifyLimits.timeoutMs.min, verifyLimits.timeoutMs.max)),
  /**
   * `exact` (default): code-unit equality only. `normalized/2`: also accept a match after normalisation that
   * keeps every number, sign and unit, labelled so. `normalized/1`: deprecated, read as `normalized/2`.
   */
  matching: Schema.optional(Schema.Literal("exact", "normalized/1", "normalized/2")),
  /** A snippet found more than once: `accept` (default, flagged `ambiguous`) or `reject` unless a prefix/suffix picks one. */
  ambiguous: Schema.optional(Schema.Literal("accept", "reject")),
  /**
   * An excerpt from text no reader sees (invisible, background-coloured, tiny or off-page PDF text):
   * `mark` (default, accepted with `visibility: "hidden"` on its evidence) or `reject` (`HiddenEvidence`).
   */
  hidden: Schema.optional(Schema.Literal("mark", "reject")),
  /**
   * `substring` (default): an excerpt verifies wherever it occurs verbatim, `4,210` inside `4,210,000`
   * included. `tokens`: only an occurrence that starts and ends at number and word boundaries counts
   * (`SnippetCutsToken` otherwise).
   */
  boundaries: Schema.optional(Schema.Literal("substring", "tokens")),
  /**
   * Capture attestations (docs/signatures.md): `off` (default) reads none; `check` verifies each
   * capture's and reports the problems beside the result; `require` also refuses every fact whose
   * capture is unsigned or wrongly signed (`UnsignedCapture`, `SignatureInvalid`, `UnknownSigningKey`).
   */
  signatures: Schema.optional(Schema.Literal("off", "check", "require")),
  trustedKeys: Schema.optional(TrustedKeys),
  /** Signed results (docs/signatures.md): the key the service signs with when asked (`?sign=1`). */
  resultSigning: Schema.optional(ResultSigning)
}).annotations({ ...strict, identifier: "VerifyOptions" })
export type VerifyOptions = typeof VerifyOptions.Type
