/**
 * `answers`: uncited sentences, provider citation formats and the document ids providers name.
 */
import * as Schema from "effect/Schema"
import { CitationsPolicy, Exemption } from "../answer/Records.js"
import { SourceUrl } from "../Domain.js"
import { configListLimits, intBetween, strict, unique } from "./Common.js"

/**
 * Answers (prose with inline citations). `uncited`: whether a sentence that
 * needs a citation and has none rejects the answer ("reject") or is listed as a
 * finding ("report", the default); `needsCitation` shapes which sentences need one.
 */
/**
 * Which uncited sentences of an answer need a citation (docs/answers.md, "Uncited sentences"). A
 * sentence stating a quantity always does; `minLength` (code points, default 20) and `exempt` (the
 * kinds of quantity-free sentence that never need one; default all five) shape the rest.
 */
export const NeedsCitation = Schema.Struct({
  minLength: Schema.optional(intBetween(1, 10_000)),
  exempt: Schema.optional(
    Schema.Array(Exemption).pipe(Schema.maxItems(Exemption.literals.length), Schema.filter(unique("exemptions")))
  )
}).annotations({ ...strict, identifier: "NeedsCitation" })
export type NeedsCitation = typeof NeedsCitation.Type

/**
 * A document id a provider may name for an approved source (an OpenAI file id, a Cohere document
 * id, a Gemini retrieved document): 1 to 256 printable ASCII characters, no spaces.
 */
export const DocumentId = Schema.String.pipe(
  Schema.pattern(/^[\x21-\x7e]{1,256}$/, { message: () => "must be 1 to 256 printable ASCII characters without spaces" })
)

/** `answers.documentIds[]`: the id under which a provider names one approved source (recorded in the manifest). */
export const DocumentIdEntry = Schema.Struct({
  source: SourceUrl,
  id: DocumentId
}).annotations({ ...strict, identifier: "DocumentIdEntry" })
export type DocumentIdEntry = typeof DocumentIdEntry.Type

export const AnswersOptions = Schema.Struct({
  uncited: Schema.optional(Schema.Literal("reject", "report")),
  needsCitation: Schema.optional(NeedsCitation),
  /** Provider formats: a document-level citation is a `CoarseCitation` (`quote`, default) or accepted, labelled (`document`). */
  citations: Schema.optional(CitationsPolicy),
  /** Provider formats: declared document ids, each for one source of `sources`; ids and sources unique. */
  documentIds: Schema.optional(
    Schema.Array(DocumentIdEntry).pipe(
      Schema.filter((entries) =>
        entries.length <= configListLimits.sources || `must hold at most ${configListLimits.sources} entries, got ${entries.length}`
      ),
      Schema.filter((entries) => unique("document id sources")(entries.map((e) => e.source))),
      Schema.filter((entries) => unique("document ids")(entries.map((e) => e.id)))
    )
  )
}).annotations({ ...strict, identifier: "AnswersOptions" })
export type AnswersOptions = typeof AnswersOptions.Type
