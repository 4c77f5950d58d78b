/**
 * The messages between a capturing process and its extraction processes
 * (`Runner.ts` and `Child.ts`): a job out, one reply back. Errors travel
 * encoded by their own Schemas, so the capturing side gets the same typed
 * errors an in-process extraction fails with.
 */
import * as Schema from "effect/Schema"
import { ExtractionFailed, ExtractionTooLarge, InvalidEncoding, UnsupportedEncoding } from "../Errors.js"
import type { Extracted, ExtractionLimits } from "./Records.js"

/** The typed failures of `Extraction.extract`, as one Schema (encoded in the child, decoded by the runner). */
export const ExtractionErrorSchema = Schema.Union(ExtractionFailed, ExtractionTooLarge, UnsupportedEncoding, InvalidEncoding)

export interface Job {
  readonly source: string
  readonly contentType: string
  readonly body: Uint8Array
  readonly limits: ExtractionLimits
}

export type Reply =
  | { readonly _tag: "ready" }
  | { readonly _tag: "extracted"; readonly extracted: Extracted }
  | { readonly _tag: "failed"; readonly error: typeof ExtractionErrorSchema.Encoded }
  // A defect in the child (a bug, never an input): reported, not thrown away.
  | { readonly _tag: "defect"; readonly detail: string }
