/**
 * The text side of a provider stream reader (`anthropic-sse`, `bedrock-stream`):
 * text deltas as they arrive (a high surrogate ending a piece waits for its
 * pair), a block's claim opened once its text is out, its placeholders `[^k]`
 * streamed after it with their footnote marks, and a mapped block's failure
 * re-pathed to the block. One copy for both readers, so they stream alike.
 *
 * @since 0.2.0
 */
import * as Arr from "effect/Array"
import { InvalidAnswer, type StaleManifest } from "../../Errors.js"
import type { FootnoteMark } from "./Events.js"
import type { PendingDelta } from "./Machine.js"
import { Abort, type ClaimState } from "./Verification.js"

/** One citation of a block's claim: the manifest source number it names (if any) and how to queue it. */
export interface BlockCitation {
  readonly source: number | undefined
  readonly queue: (footnote: number, claim: ClaimState, citationIndex: number) => void
}

/**
 * The streamed text of one reader: what has gone out (UTF-16 units), what waits to go out, the
 * footnote marks of the next delta and the claims opened so far.
 */
export class TextDeltas {
  readonly claims: Array<ClaimState> = []
  footnotes = 0
  /** UTF-16 units of text emitted so far (deltas taken or not). */
  private out = 0
  private delta = ""
  private held = ""
  private marks: Array<typeof FootnoteMark.Type> = []

  private emit(text: string) {
    this.delta += text
    this.out += text.length
  }

  /** A text piece of a block (the accumulator's listener). */
  readonly text = (_index: number, piece: string): void => {
    const all = this.held + piece
    // A high surrogate ending a piece waits for its pair: a delta never splits a character.
    const last = all.charCodeAt(all.length - 1)
    this.held = last >= 0xd800 && last <= 0xdbff ? all.slice(-1) : ""
    this.emit(this.held === "" ? all : all.slice(0, -1))
  }

  /** A block stopped: a surrogate still held goes out alone (the block ends there). */
  blockStop(): void {
    if (this.held !== "") this.emit(this.held)
    this.held = ""
  }

  /**
   * The claim of block `index` (its last sentence `text`), whose whole `blockText` is out now: its
   * sentence range, then one placeholder per citation streamed after it, each citation queued.
   */
  openClaim(index: number, text: string, blockText: string, citations: ReadonlyArray<BlockCitation>): void {
    const id = `block-${index}`
    // Everything of the block's text is out now: it starts its length back.
    const start = this.out - blockText.length
    const first = this.footnotes + 1
    const markers = citations.map((_, k) => `[^${first + k}]`)
    const state: ClaimState = {
      index: this.claims.length,
      id,
      text,
      sentence: { start: start + blockText.trimEnd().length - text.length, end: this.out + markers.join("").length },
      total: citations.length,
      verified: 0,
      retracted: 0
    }
    this.claims.push(state)
    citations.forEach(({ queue, source }, citationIndex) => {
      const footnote = ++this.footnotes
      this.marks.push({ footnote, claimId: id, ...(source === undefined ? {} : { source }), at: this.out })
      queue(footnote, state, citationIndex)
      this.emit(markers[citationIndex]!)
    })
  }

  /** The text and marks gathered since the last call, if any. */
  take(): PendingDelta | undefined {
    if (this.delta === "") return undefined
    const pending = { text: this.delta, footnotes: this.marks }
    this.delta = ""
    this.marks = []
    return pending
  }
}

/**
 * A block mapped as a one-block response failed: abort with its error, an `InvalidAnswer`'s issue
 * paths pointing at block `index` (segment `at` of each path is the one-block response's block 0).
 */
export const blockFailure = (error: InvalidAnswer | StaleManifest, at: number, index: number): Abort =>
  new Abort(
    error._tag === "InvalidAnswer"
      ? new InvalidAnswer({
        issues: Arr.map(error.issues, (i) => ({ ...i, path: i.path.map((p, k) => (k === at && p === 0 ? index : p)) })),
        ...(error.omitted === undefined ? {} : { omitted: error.omitted })
      })
      : error
  )
