/**
 * JSON-LD renderings (`--format jsonld`) of reports, answers and audits: the JSON rendering itself,
 * every key and value kept, made a linked-data graph by citegate's published context
 * (`urn:citegate:context:v1`, the file `schema/citegate-v1.context.jsonld`) and a few additions:
 *
 * - `@id`s: the document is a `urn:uuid` derived from the result (the same result, the same ids),
 *   each node of interest that IRI with a fragment (`#facts/0`, `#facts/0/evidence`);
 * - `@type`s: `Claim` (a verified fact, a grounded answer claim), `Evidence` (a verified citation's
 *   evidence), `UnavailableFact`, `RejectedCitation` (a retracted or failed citation: never evidence),
 *   `RemovedClaim`, `DocumentLevelClaim`, `Review`, `AuditFinding` and the result's own type;
 * - on each Evidence node, what the shapes check without looking elsewhere: `sourceDocument` (the
 *   source as an IRI), `quote` (the excerpt as cited) and `captureDigest` (the capture's SHA-256); an
 *   answer's Claim also lists its evidence by `@id` under `evidence`.
 *
 * The context's `@vocab` maps every other key to `urn:citegate:vocab:<key>`, so a JSON-LD processor's
 * expansion drops nothing; a `null` (an answer without a manifest) is the one value JSON-LD reads as
 * absent. Pure: text is only ever a JSON string value (`JSON.stringify` escapes what JSON must), never
 * a key, an `@id` or a `@type`, so nothing from a source or a drafter is interpreted.
 *
 * @since 0.4.0
 */
import { contextIri } from "../evidence/Records.js"
import { uuidOf } from "../internal/uuid.js"

type Json = null | boolean | number | string | ReadonlyArray<Json> | JsonObject
interface JsonObject {
  readonly [key: string]: Json
}

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const objects = (value: Json | undefined): ReadonlyArray<JsonObject> =>
  Array.isArray(value) ? value.filter(isObject) : []

const str = (value: Json | undefined): string | undefined => (typeof value === "string" ? value : undefined)

/** A node: its id and type first, then every key it had. */
const node = (id: string, type: string, value: JsonObject, extra: JsonObject = {}): JsonObject => ({
  "@id": id,
  "@type": type,
  ...value,
  ...extra
})

/** What a citation said, carried onto its Evidence node. */
interface Cited {
  readonly source: string | undefined
  readonly captureSha256: string | undefined
  readonly quote: string | undefined
}

const evidenceNode = (id: string, evidence: JsonObject, cited: Cited): JsonObject =>
  node(id, "Evidence", evidence, {
    ...(cited.source === undefined ? {} : { sourceDocument: cited.source }),
    ...(cited.quote === undefined ? {} : { quote: cited.quote }),
    ...(cited.captureSha256 === undefined ? {} : { captureDigest: cited.captureSha256 })
  })

const rejected = (base: string, list: Json | undefined): ReadonlyArray<JsonObject> =>
  objects(list).map((item, i) => node(`${base}/${i}`, "RejectedCitation", item))

/** The review outcomes present (judge, recorded human review, number review), typed `Review`. */
const reviews = (doc: string, holder: JsonObject, keys: ReadonlyArray<string>) => {
  const nodes: Record<string, JsonObject> = {}
  for (const key of keys) {
    const value = holder[key]
    if (isObject(value)) nodes[key] = node(`${doc}#${key}`, "Review", value)
  }
  return nodes
}

const reviewLinks = (nodes: Record<string, JsonObject>): JsonObject =>
  Object.keys(nodes).length === 0 ? {} : { review: Object.values(nodes).map((n) => ({ "@id": n["@id"]! })) }

const document = (kind: string, encoded: JsonObject, type: string, body: (doc: string) => JsonObject): string => {
  const doc = uuidOf(`citegate ${kind} ${JSON.stringify(encoded)}`)
  return JSON.stringify({ "@context": contextIri, ...node(doc, type, encoded), ...body(doc) }, null, 2) + "\n"
}

const reportEntry = (doc: string, entry: JsonObject, i: number): JsonObject => {
  const id = `${doc}#facts/${i}`
  const fact = isObject(entry["fact"]) ? entry["fact"] : {}
  const evidence = entry["evidence"]
  if (!isObject(evidence)) return node(id, "UnavailableFact", entry)
  return node(id, "Claim", entry, {
    evidence: evidenceNode(`${id}/evidence`, evidence, {
      source: str(fact["source"]),
      captureSha256: str(fact["captureSha256"]),
      quote: str(fact["snippet"])
    })
  })
}

/**
 * A report's result (`citegate.result/1`, the object the `json` format writes) as JSON-LD.
 *
 * @since 0.4.0
 */
export const report = (encoded: JsonObject): string =>
  document("report", encoded, "ReportResult", (doc) => {
    const out: Record<string, Json> = {}
    const verified = encoded["report"]
    if (isObject(verified)) {
      const inner = reviews(doc, verified, ["numberReview"])
      out["report"] = node(`${doc}#report`, "VerifiedReport", verified, {
        facts: objects(verified["facts"]).map((entry, i) => reportEntry(doc, entry, i)),
        retractions: rejected(`${doc}#retractions`, verified["retractions"]),
        ...inner,
        ...reviewLinks(inner)
      })
    }
    const error = encoded["error"]
    if (isObject(error) && Array.isArray(error["failures"])) {
      out["error"] = { ...error, failures: rejected(`${doc}#failures`, error["failures"]) }
    }
    const outer = reviews(doc, encoded, ["judge", "humanReview"])
    return { ...out, ...outer, ...reviewLinks(outer) }
  })

const answerClaim = (doc: string, claim: JsonObject, i: number): JsonObject => {
  const id = `${doc}#claims/${i}`
  const citations = objects(claim["citations"]).map((c, j): JsonObject => {
    const citation = isObject(c["citation"]) ? c["citation"] : {}
    const evidence = c["evidence"]
    if (!isObject(evidence)) return c
    return {
      ...c,
      evidence: evidenceNode(`${id}/citations/${j}/evidence`, evidence, {
        source: str(citation["source"]),
        captureSha256: str(citation["captureSha256"]),
        quote: str(citation["quote"])
      })
    }
  })
  return node(id, "Claim", claim, {
    citations,
    retracted: rejected(`${id}/retracted`, claim["retracted"]),
    evidence: citations.flatMap((c) => (isObject(c["evidence"]) ? [{ "@id": c["evidence"]["@id"]! }] : []))
  })
}

/**
 * An answer's result (`citegate.answer-result/1`) as JSON-LD.
 *
 * @since 0.4.0
 */
export const answer = (encoded: JsonObject): string =>
  document("answer", encoded, "AnswerResult", (doc) => {
    const out: Record<string, Json> = {}
    const verified = encoded["answer"]
    if (isObject(verified)) {
      out["answer"] = node(`${doc}#answer`, "VerifiedAnswer", verified, {
        claims: objects(verified["claims"]).map((claim, i) => answerClaim(doc, claim, i)),
        removed: objects(verified["removed"]).map((claim, i) =>
          node(`${doc}#removed/${i}`, "RemovedClaim", claim, { reasons: rejected(`${doc}#removed/${i}/reasons`, claim["reasons"]) })
        ),
        ...(Array.isArray(verified["documentLevel"])
          ? {
            documentLevel: objects(verified["documentLevel"]).map((claim, i) =>
              node(`${doc}#documentLevel/${i}`, "DocumentLevelClaim", claim, {
                retracted: rejected(`${doc}#documentLevel/${i}/retracted`, claim["retracted"])
              })
            )
          }
          : {})
      })
    }
    const outer = reviews(doc, encoded, ["judge"])
    return { ...out, ...outer, ...reviewLinks(outer) }
  })

/**
 * An audit's result (`citegate.audit/1`) as JSON-LD.
 *
 * @since 0.4.0
 */
export const audit = (encoded: JsonObject): string =>
  document("audit", encoded, "AuditResult", (doc) => ({
    findings: objects(encoded["findings"]).map((finding, i) => node(`${doc}#findings/${i}`, "AuditFinding", finding))
  }))

export type { Json as JsonValue, JsonObject }
