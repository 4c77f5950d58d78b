/**
 * EVI1 issues: every one counted, a bounded number held, the first ones in line order reported.
 */
import type * as Arr from "effect/Array"
import { Evi1Invalid, type Evi1Issue } from "../../Errors.js"

/** Most issues an `Evi1Invalid` lists (in line order); the rest are counted in `omitted`. */
export const maxListedIssues = 100
/**
 * Most issues held while parsing: a hostile text can carry millions. When the buffer fills, only
 * the first `maxListedIssues` in line order are kept, so the listed ones are the first of all.
 */
export const maxHeldIssues = 10_000

/** The first `maxListedIssues` issues in line order (a stable sort: issues of one line keep the order they were found in). */
const firstInLineOrder = (issues: ReadonlyArray<Evi1Issue>): Array<Evi1Issue> =>
  [...issues].sort((a, b) => a.line - b.line).slice(0, maxListedIssues)

export class Issues {
  private list: Array<Evi1Issue> = []
  total = 0
  push(issue: Evi1Issue): void {
    this.total++
    this.list.push(issue)
    if (this.list.length >= maxHeldIssues) this.list = firstInLineOrder(this.list)
  }
  /** The issues of one body line: those held, and how many more there were. */
  addLine(line: { readonly held: ReadonlyArray<Evi1Issue>; readonly extra: number }): void {
    for (const issue of line.held) this.push(issue)
    this.total += line.extra
  }
  get isEmpty(): boolean {
    return this.total === 0
  }
  /** The first issues in line order. */
  toError(): Evi1Invalid {
    const sorted = firstInLineOrder(this.list)
    const omitted = this.total - sorted.length
    return new Evi1Invalid({
      issues: sorted as unknown as Arr.NonEmptyArray<Evi1Issue>,
      ...(omitted > 0 ? { omitted } : {})
    })
  }
}
