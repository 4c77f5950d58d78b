/**
 * citegate: provable citations for generated reports.
 *
 * Every accepted excerpt occurs, verbatim, in the exact source capture and
 * revision that the report names; every other fact is an explicit
 * "unavailable" entry with a reason and nothing else.
 *
 * @since 0.1.0
 */

/** Trusted side: fetches approved sources and writes capture records. */
export * as Capture from "./capture/Capture.js"
export * as CaptureStore from "./store/CaptureStore.js"
/** An in-memory CaptureStore (tests, services that hold captures elsewhere). */
export * as MemoryStore from "./store/Memory.js"
// The PostgreSQL store is only a subpath entry, `citegate/PostgresStore`: it loads `@effect/sql-pg`
// and the `pg` driver (optional peers), which an application without a database never installs.
export * as Migrate from "./store/Migrate.js"

/** Read-only side: checks reports against captures. */
export * as Verifier from "./verify/Verifier.js"
export * as Gate from "./verify/Gate.js"
export * as Policy from "./verify/Policy.js"
/** What a drafting model is handed: the run's numbered sources and digests, and a prompt block. */
export * as Manifest from "./Manifest.js"

/** Shared records, configuration and errors. */
export * as Config from "./Config.js"
export * as Domain from "./Domain.js"
export * as Errors from "./Errors.js"
export * from "./Errors.js"
export * from "./Domain.js"
export { VerifiedReport } from "./verify/VerifiedReport.js"

/** Output: text, Markdown, HTML and JSON renderers. */
export * as Render from "./render/Render.js"

/** Answers: prose claims with inline citations (citegate.answer/1, EVI1, Anthropic Citations), verified by the Verifier. */
export * as Answer from "./answer/Answer.js"
export * as AnswerRecords from "./answer/Records.js"
export * as Evi1 from "./answer/Evi1.js"
export * as Anthropic from "./answer/Anthropic.js"
/** Provider-native citations: Bedrock Converse, Gemini grounding, OpenAI annotations, Cohere v2; and their capability table. */
export * as Bedrock from "./answer/Bedrock.js"
export * as Gemini from "./answer/Gemini.js"
export * as OpenAI from "./answer/OpenAI.js"
export * as Cohere from "./answer/Cohere.js"
export * as AnswerCapabilities from "./answer/Capabilities.js"
/** The documents hand-off: the run's capture texts for the drafting model (Anthropic, Bedrock, EVI1, JSON). */
export * as Documents from "./answer/Documents.js"
export * as AnswerRender from "./answer/Render.js"

/** Drift audit: what became of a verified report's or answer's citations in a later capture of the same sources. */
export * as Audit from "./audit/Audit.js"
export * as AuditRecords from "./audit/Records.js"
export * as AuditMaterial from "./audit/Material.js"
/** Anchoring: verified spans in UTF-16, code points and UTF-8 bytes; W3C Web Annotation selectors. */
export * as Offsets from "./anchor/Offsets.js"
export * as Selectors from "./anchor/Selectors.js"
/** Repair: the nearest passage to a failed quote (normalized/1, fuzzy) and instructions for the drafting model. */
export * as Normalize from "./anchor/Normalize.js"
export * as Nearest from "./anchor/Nearest.js"
export * as Similarity from "./anchor/Similarity.js"
/** normalized/2's token check: the numbers, signs and units a quote changes against the capture's text. */
export * as MeaningGuard from "./anchor/MeaningGuard.js"
export * as Repair from "./render/Repair.js"
/** Semantic review: the entailment judge (`review.judge`), its records, its start-up gating and its review of verified results. */
export * as Judge from "./review/Judge.js"
export * as ReviewRecords from "./review/Records.js"
export * as JudgeSetup from "./review/JudgeSetup.js"
export * as JudgeReview from "./review/JudgeReview.js"
/** Recorded human review: decisions bound to verified facts, and the run's append-only review log (its contract and the filesystem log). */
export * as ReviewDecisions from "./review/Decisions.js"
export * as ReviewLog from "./store/ReviewLog.js"
export * as ReviewFilesystem from "./store/ReviewFilesystem.js"

// Signed verification results (docs/signatures.md, "Signed results"): sign a result that passed, check one offline.
export * as ResultAttestation from "./evidence/ResultAttestation.js"
