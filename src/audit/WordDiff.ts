/**
 * A word-level diff of an old excerpt and its new candidate, for showing a
 * reader which tokens changed. Display only: findings and flags are decided by
 * the audit, never by this.
 *
 * Bounded on hostile input: each side is cut to `maxChars` code units before
 * tokenising, the common prefix and suffix are stripped in one linear pass, and
 * the middle is diffed by Myers' O((N + M) · D) algorithm with D capped at
 * `maxEdits`: past the cap the whole middle is shown as changed (`exact: false`).
 * So the cost is at most O((N + M) · maxEdits), linear in the text for the fixed cap.
 *
 * @since 0.1.0
 */

export const diffLimits = {
  /** Code units of each side that are tokenised and shown; the rest is cut with its length stated. */
  maxChars: 4_000,
  /** Most token insertions plus deletions searched for; past it the changed middle is shown whole. */
  maxEdits: 256
} as const

/** A run of tokens of one side, changed (only on this side) or common to both. */
export interface Piece {
  readonly text: string
  readonly changed: boolean
}

export interface WordDiff {
  readonly old: ReadonlyArray<Piece>
  readonly new: ReadonlyArray<Piece>
  /** False when the edit cap was passed and the middle is marked changed as a whole. */
  readonly exact: boolean
  /** The full lengths when a side was cut to `maxChars` (undefined when shown whole). */
  readonly oldCut: number | undefined
  readonly newCut: number | undefined
}

// Words (letters, marks, digits, with inner `.`/`,`/`:` between digits, so 4,210 and 1.5 and 10:30 are one token,
// and a trailing `%`), runs of white space, or any other single code point. No nested quantifier can backtrack.
const tokenPattern = /\s+|[\p{L}\p{M}\p{N}]+(?:[.,:][\p{N}]+)*%?|[\s\S]/gu

export const tokenize = (s: string): Array<string> => s.match(tokenPattern) ?? []

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/** The first `max` code units, one fewer if that would split a surrogate pair. */
export const head = (s: string, max: number) => s.slice(0, isHighSurrogate(s.charCodeAt(max - 1)) ? max - 1 : max)

/** Joins adjacent tokens with the same flag into pieces. */
const pieces = (tokens: ReadonlyArray<string>, changed: ReadonlyArray<boolean>): Array<Piece> => {
  const out: Array<{ text: string; changed: boolean }> = []
  tokens.forEach((text, i) => {
    const last = out[out.length - 1]
    if (last !== undefined && last.changed === changed[i]) last.text += text
    else out.push({ text, changed: changed[i]! })
  })
  return out
}

/**
 * Myers' shortest edit script on token arrays, with at most `maxD` edits. Marks
 * `delA[i]` for tokens of `a` only the old side has and `insB[j]` for tokens only
 * the new side has; returns false (marking nothing) when more edits are needed.
 */
const myers = (a: ReadonlyArray<string>, b: ReadonlyArray<string>, maxD: number, delA: Array<boolean>, insB: Array<boolean>) => {
  const n = a.length
  const m = b.length
  const max = Math.min(n + m, maxD)
  const offset = max + 1
  const v = new Int32Array(2 * max + 3)
  const trace: Array<Int32Array> = []
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice())
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1
      let y = x - k
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      v[offset + k] = x
      if (x >= n && y >= m) {
        // Walk back through the saved frontiers, marking each edit.
        let cx = n
        let cy = m
        for (let e = d; e > 0; e--) {
          const prev = trace[e]!
          const ck = cx - cy
          const down = ck === -e || (ck !== e && prev[offset + ck - 1]! < prev[offset + ck + 1]!)
          const pk = down ? ck + 1 : ck - 1
          // The edit's start (the snake after it needs no marks: its tokens are common).
          const px = prev[offset + pk]!
          const py = px - pk
          if (down) insB[py] = true
          else delA[px] = true
          cx = px
          cy = py
        }
        return true
      }
    }
  }
  return false
}

/** The word-level diff of `oldText` against `newText`, bounded as described above. */
export const wordDiff = (oldText: string, newText: string): WordDiff => {
  const { maxChars, maxEdits } = diffLimits
  const oldCut = oldText.length > maxChars ? oldText.length : undefined
  const newCut = newText.length > maxChars ? newText.length : undefined
  const a = tokenize(oldCut === undefined ? oldText : head(oldText, maxChars))
  const b = tokenize(newCut === undefined ? newText : head(newText, maxChars))
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--
    endB--
  }
  const delA = new Array<boolean>(a.length).fill(false)
  const insB = new Array<boolean>(b.length).fill(false)
  const midDel = new Array<boolean>(endA - start).fill(false)
  const midIns = new Array<boolean>(endB - start).fill(false)
  const exact = myers(a.slice(start, endA), b.slice(start, endB), maxEdits, midDel, midIns)
  for (let i = start; i < endA; i++) delA[i] = exact ? midDel[i - start]! : true
  for (let j = start; j < endB; j++) insB[j] = exact ? midIns[j - start]! : true
  return { old: pieces(a, delA), new: pieces(b, insB), exact, oldCut, newCut }
}
