import { Either, ParseResult, Schema } from "effect"
import * as Arr from "effect/Array"
import { decodeOptions } from "../Domain.js"
import type { Issue } from "../Errors.js"
import * as StrictJson from "./strictJson.js"

const toIssues = (error: ParseResult.ParseError): Arr.NonEmptyReadonlyArray<Issue> => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
    message: issue.message
  }))
  return Arr.isNonEmptyReadonlyArray(issues) ? issues : [{ path: [], message: "invalid" }]
}

/** Strict decode (unknown keys rejected, all issues collected) to a list of issues with paths. */
export const decodeUnknown = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, decodeOptions)
  return (input: unknown): Either.Either<A, Arr.NonEmptyReadonlyArray<Issue>> =>
    Either.mapLeft(decode(input), toIssues)
}

/** Strict JSON (no repeated or prototype keys) followed by a strict decode. */
export const decodeJson = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = decodeUnknown(schema)
  return (text: string): Either.Either<A, Arr.NonEmptyReadonlyArray<Issue>> => {
    const parsed = StrictJson.parse(text)
    return parsed._tag === "Left" ? Either.left([parsed.issue]) : decode(parsed.value)
  }
}
