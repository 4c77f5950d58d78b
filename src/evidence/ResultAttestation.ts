/**
 * Signed verification results: a DSSE envelope over an in-toto Statement v1 whose subject is the
 * drafted report or answer (the SHA-256 of its exact input bytes) and whose predicate
 * (`urn:citegate:predicate:verification-result:v1`) says that it passed the gate: under which policy,
 * against which captures (each source's body and text SHA-256), with how many verified, unavailable
 * and document-level outcomes, by which citegate, when. Signed with the operator's Ed25519 key
 * (src/evidence/Signatures.ts), so whoever publishes or renders the report downstream checks it
 * offline, with the public key alone (`run-pipeline check-attestation`).
 *
 * Only a result that passed is signed: a rejected report never reaches `signResult`, and a
 * `no_evidence` one is refused (`ResultNotPassed`). What a valid signature does not prove:
 * docs/signatures.md, "Signed results".
 *
 * @since 0.4.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import type { AnswersOptions } from "../answer/Answer.js"
import type { VerifiedAnswer } from "../answer/Records.js"
import type { CaptureRecord, SourceUrl } from "../Domain.js"
import {
  AttestationCaptureMismatch,
  AttestationSubjectMismatch,
  AttestationTypeMismatch,
  EnvelopeMalformed,
  ResultNotPassed,
  type SignatureInvalid,
  type UnknownSigningKey
} from "../Errors.js"
import type { CaptureStoreShape } from "../store/CaptureStore.js"
import type { PolicyShape } from "../verify/Policy.js"
import type { VerifiedReport } from "../verify/VerifiedReport.js"
import { version } from "../version.js"
import * as CaptureAttestation from "./CaptureAttestation.js"
import {
  type Envelope,
  type PublicKey,
  renderEnvelope,
  type SigningKey,
  signStatementOf,
  statementSchema,
  statementType,
  verifyEnvelopeOf
} from "./Signatures.js"

/** citegate's verification-result predicate (versioned: a change of its fields is a new version). */
export const resultPredicateType = "urn:citegate:predicate:verification-result:v1"

/**
 * Largest result attestation read, checked before it is parsed. A result names each distinct
 * capture it was checked against: at most 1,000 (`sources`), each URL at most 8,192 characters, so
 * the largest envelope citegate can sign is about 11 MiB base64; the usual one is a few KiB.
 */
export const maxResultAttestationBytes = 16 * 1024 * 1024

/** Most captures one result names (the configuration's source limit). */
export const maxResultCaptures = 1_000

const strict = { parseOptions: { onExcessProperty: "error" as const } }
const Sha256Hex = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/))
const Count = Schema.NonNegativeInt

/**
 * One capture the result was checked against: the body's and the text's SHA-256, as a capture's own
 * attestation names them. A document-level citation (answers) names its capture by the text digest
 * only: `sha256` is then absent.
 */
export const ResultCapture = Schema.Struct({
  source: Schema.String.pipe(Schema.maxLength(8192)),
  sha256: Schema.optional(Sha256Hex),
  "text-sha256": Sha256Hex
}).annotations({ ...strict, identifier: "ResultCapture" })
export type ResultCapture = typeof ResultCapture.Type

/** The policy the gate applied. `answers` only for an answer. */
export const ResultPolicy = Schema.Struct({
  mode: Schema.Literal("reject", "drop"),
  matching: Schema.Literal("exact", "normalized/1", "normalized/2"),
  ambiguous: Schema.Literal("accept", "reject"),
  hidden: Schema.Literal("mark", "reject"),
  boundaries: Schema.Literal("substring", "tokens"),
  /** `verify.signatures` and the key ids it trusted (sorted). */
  signatures: Schema.Struct({
    mode: Schema.Literal("off", "check", "require"),
    trustedKeys: Schema.Array(Sha256Hex).pipe(Schema.maxItems(64))
  }).annotations(strict),
  answers: Schema.optional(
    Schema.Struct({
      citations: Schema.Literal("quote", "document"),
      uncited: Schema.Literal("reject", "report")
    }).annotations(strict)
  )
}).annotations({ ...strict, identifier: "ResultPolicy" })
export type ResultPolicy = typeof ResultPolicy.Type

/** The run the captures were read from: its id (a run directory's name, a PostgreSQL run, the service's run id) and store. */
export const ResultRun = Schema.Struct({
  id: Schema.String.pipe(Schema.maxLength(4096)),
  store: Schema.Literal("filesystem", "postgres", "memory", "other")
}).annotations({ ...strict, identifier: "ResultRun" })
export type ResultRun = typeof ResultRun.Type

/**
 * Counts of the outcome: `verified` cited facts (report) or verified citations (answer);
 * `unavailable` facts passed on as unavailable (reports); `documentLevel` citations accepted as
 * document-level, never verified quotes (answers under `answers.citations: "document"`); `removed`
 * facts (report) or claims (answer) taken out in drop mode; `signatureNotes` captures whose own
 * attestation did not hold under `verify.signatures: "check"` (reports).
 */
export const ResultCounts = Schema.Struct({
  verified: Count,
  unavailable: Count,
  documentLevel: Count,
  removed: Count,
  signatureNotes: Count
}).annotations({ ...strict, identifier: "ResultCounts" })
export type ResultCounts = typeof ResultCounts.Type

export const ResultPredicate = Schema.Struct({
  /** Only results that passed are signed: there is no other value. */
  gate: Schema.Literal("passed"),
  kind: Schema.Literal("report", "answer"),
  outcome: Schema.Literal("grounded"),
  run: ResultRun,
  captures: Schema.Array(ResultCapture).pipe(Schema.maxItems(maxResultCaptures)),
  policy: ResultPolicy,
  counts: ResultCounts,
  /** The manifest digest an answer was bound to (answers; `null` when it named none). */
  manifest: Schema.optional(Schema.NullOr(Sha256Hex)),
  /** What was proved: verbatim provenance, nothing about meaning. */
  proves: Schema.Literal("provenance-only"),
  verifiedAt: Schema.String.pipe(Schema.maxLength(64)),
  producer: Schema.String.pipe(Schema.maxLength(256))
}).annotations({ ...strict, identifier: "ResultPredicate" })
export type ResultPredicate = typeof ResultPredicate.Type

/** The statement of a verification result, decoded strictly. */
export const ResultStatement = statementSchema(resultPredicateType, ResultPredicate).annotations({
  identifier: "ResultStatement"
})
export type ResultStatement = typeof ResultStatement.Type

/** Any in-toto statement, its predicate type read first: the envelope of another kind is told apart. */
const AnyStatement = Schema.Struct({
  _type: Schema.Literal(statementType),
  subject: Schema.Unknown,
  predicateType: Schema.String.pipe(Schema.maxLength(1024)),
  predicate: Schema.Unknown
})

/** SHA-256 (hex) of the exact input: the bytes read, or a text's UTF-8. */
export const inputSha256 = (input: string | Uint8Array): string => createHash("sha256").update(input).digest("hex")

/** The store kind a `CaptureStoreShape.identity` names (`file:…`, `postgres:…`, `memory:…`). */
export const storeKindOf = (identity: string | undefined): ResultRun["store"] => {
  const scheme = identity?.slice(0, identity.indexOf(":"))
  return scheme === "file" ? "filesystem" : scheme === "postgres" ? "postgres" : scheme === "memory" ? "memory" : "other"
}

const capturesOf = (
  captures: ReadonlyMap<string, CaptureRecord>,
  documents: ReadonlyArray<{ readonly source: string; readonly captureSha256: string }> = []
): Array<ResultCapture> => {
  const out = new Map<string, ResultCapture>()
  for (const [source, record] of captures) {
    // The digests exactly as the capture's own attestation names them.
    const digest = CaptureAttestation.statementOf(record).subject[0].digest
    out.set(source, { source, sha256: digest.sha256, "text-sha256": digest["text-sha256"] })
  }
  for (const document of documents) {
    if (!out.has(document.source)) out.set(document.source, { source: document.source, "text-sha256": document.captureSha256 })
  }
  return [...out.values()].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0))
}

const policyOf = (policy: PolicyShape, mode: "reject" | "drop", answers?: ResultPolicy["answers"]): ResultPolicy => ({
  mode,
  matching: policy.matching,
  ambiguous: policy.ambiguous,
  hidden: policy.hidden ?? "mark",
  boundaries: policy.boundaries ?? "substring",
  signatures: {
    mode: policy.signatures?.mode ?? "off",
    trustedKeys: (policy.signatures?.trusted ?? []).map((k) => k.keyid).sort()
  },
  ...(answers === undefined ? {} : { answers })
})

/** What was verified, as the gate passed it on. */
export type VerifiedResult =
  | {
    readonly kind: "report"
    readonly report: VerifiedReport
    readonly captures: ReadonlyMap<string, CaptureRecord>
    readonly signatureNotes?: ReadonlyArray<unknown> | undefined
  }
  | {
    readonly kind: "answer"
    readonly answer: VerifiedAnswer
    readonly captures: ReadonlyMap<string, CaptureRecord>
    readonly options: AnswersOptions
  }

/** What a signed result names beside the verification: its input, the policy and the run. */
export interface ResultContext {
  /** A name for the input (the report's file name); the digest is what is checked. */
  readonly name: string
  /** The exact bytes verified (or their text, hashed as UTF-8). */
  readonly input: string | Uint8Array
  readonly policy: PolicyShape
  readonly run: ResultRun
}

/** The statement of a result that passed; `verifiedAt` is an RFC 3339 time. */
export const statementOf = (result: VerifiedResult, context: ResultContext, verifiedAt: string): ResultStatement => {
  const common = {
    gate: "passed" as const,
    outcome: "grounded" as const,
    run: context.run,
    proves: "provenance-only" as const,
    verifiedAt,
    producer: `citegate/${version}`
  }
  const predicate: ResultPredicate = result.kind === "report"
    ? {
      ...common,
      kind: "report",
      captures: capturesOf(result.captures),
      policy: policyOf(context.policy, result.report.mode),
      counts: {
        verified: result.report.facts.filter((entry) => entry.fact.state === "cited").length,
        unavailable: result.report.facts.filter((entry) => entry.fact.state === "unavailable").length,
        documentLevel: 0,
        removed: result.report.retractions.length,
        signatureNotes: result.signatureNotes?.length ?? 0
      }
    }
    : {
      ...common,
      kind: "answer",
      captures: capturesOf(
        result.captures,
        [...result.answer.claims.flatMap((c) => c.documents ?? []), ...(result.answer.documentLevel ?? []).flatMap((c) => c.documents)]
          .map((d) => d.citation)
      ),
      policy: policyOf(context.policy, result.answer.mode, {
        citations: result.options.citations ?? "quote",
        uncited: result.options.uncited
      }),
      counts: {
        verified: result.answer.summary.citationsVerified,
        unavailable: 0,
        documentLevel: result.answer.summary.citationsDocumentLevel ?? 0,
        removed: result.answer.summary.claimsRemoved,
        signatureNotes: 0
      },
      manifest: result.answer.manifest
    }
  return {
    _type: statementType,
    subject: [{ name: context.name, digest: { sha256: inputSha256(context.input) } }],
    predicateType: resultPredicateType,
    predicate
  }
}

const outcomeOf = (result: VerifiedResult) => (result.kind === "report" ? result.report.outcome : result.answer.outcome)

/**
 * Signs a result that passed the gate: the DSSE envelope (Ed25519 over PAE) of its statement, the
 * time taken from the Clock. A result that did not pass (`no_evidence`) is refused with
 * `ResultNotPassed`: nothing is signed for it.
 *
 * @since 0.4.0
 * @category signing
 */
export const signResult = Effect.fn("ResultAttestation.signResult")(function*(
  result: VerifiedResult,
  context: ResultContext,
  key: SigningKey
) {
  const outcome = outcomeOf(result)
  if (outcome !== "grounded") return yield* new ResultNotPassed({ kind: result.kind, outcome })
  const now = yield* Clock.currentTimeMillis
  const statement = statementOf(result, context, new Date(now).toISOString())
  return signStatementOf(ResultStatement)(statement, key) satisfies Envelope
})

/** The envelope as the text written beside an output. */
export const render = renderEnvelope

const verifyAny = verifyEnvelopeOf(AnyStatement, { maxBytes: maxResultAttestationBytes })

/**
 * Checks a result attestation (the envelope's text) against trusted keys and the input it claims to
 * attest, in order: the envelope and its signature as for every envelope (`EnvelopeMalformed`,
 * `UnknownSigningKey`, `SignatureInvalid`; at most `maxResultAttestationBytes`, checked before
 * parsing), that the signed statement is a verification result (`AttestationTypeMismatch`: a
 * capture's or an export's envelope), that it decodes strictly (`EnvelopeMalformed`), and that its
 * subject is the SHA-256 of `input` (`AttestationSubjectMismatch`: another report, or an edited one).
 * Pure.
 *
 * @since 0.4.0
 * @category verifying
 */
export const checkResultAttestation = (options: {
  readonly envelope: string
  readonly input: string | Uint8Array
  /** How the input is named in an error (its file). */
  readonly name: string
  readonly trusted: ReadonlyArray<PublicKey>
}): Either.Either<
  { readonly statement: ResultStatement; readonly keyid: string; readonly sha256: string },
  EnvelopeMalformed | UnknownSigningKey | SignatureInvalid | AttestationTypeMismatch | AttestationSubjectMismatch
> =>
  Either.gen(function*() {
    const checked = yield* verifyAny(options.envelope, options.trusted)
    if (checked.statement.predicateType !== resultPredicateType) {
      return yield* Either.left(new AttestationTypeMismatch({ expected: resultPredicateType, found: checked.statement.predicateType }))
    }
    const statement = yield* Schema.decodeUnknownEither(ResultStatement, { errors: "all", onExcessProperty: "error" })(checked.statement).pipe(
      Either.mapLeft((error) =>
        new EnvelopeMalformed({ detail: `the signed statement: ${ParseResult.TreeFormatter.formatErrorSync(error)}` })
      )
    )
    const sha256 = inputSha256(options.input)
    const signed = statement.subject[0].digest.sha256
    if (signed !== sha256) {
      return yield* Either.left(new AttestationSubjectMismatch({ path: options.name, signedSha256: signed, actualSha256: sha256 }))
    }
    return { statement, keyid: checked.keyid, sha256 }
  })

/**
 * Checks the captures a signed result names against a run's store: each must be there (read as the
 * Verifier reads it, digests checked) with the same body and text SHA-256
 * (`AttestationCaptureMismatch` at the first that is not). Read-only; each capture read once.
 *
 * @since 0.4.0
 * @category verifying
 */
export const checkCaptures = Effect.fn("ResultAttestation.checkCaptures")(function*(
  statement: ResultStatement,
  store: CaptureStoreShape
) {
  for (const capture of statement.predicate.captures) {
    const record = yield* store.read(capture.source as SourceUrl).pipe(
      Effect.mapError((error) => new AttestationCaptureMismatch({ source: capture.source, detail: `it cannot be read (${error._tag})` }))
    )
    const digest = CaptureAttestation.statementOf(record).subject[0].digest
    if (capture.sha256 !== undefined && capture.sha256 !== digest.sha256) {
      return yield* new AttestationCaptureMismatch({
        source: capture.source,
        detail: `its body SHA-256 is ${digest.sha256}, the signed result names ${capture.sha256}`
      })
    }
    if (capture["text-sha256"] !== digest["text-sha256"]) {
      return yield* new AttestationCaptureMismatch({
        source: capture.source,
        detail: `its text SHA-256 is ${digest["text-sha256"]}, the signed result names ${capture["text-sha256"]}`
      })
    }
  }
  return statement.predicate.captures.length
})
