/**
 * Exact search of many snippets in one text: for each snippet, the first
 * occurrence and the number of (possibly overlapping) occurrences, by exact
 * UTF-16 code-unit equality. With `countUpTo` the count stops at that many and
 * a snippet's search ends there: the Verifier needs only "more than one" (2),
 * anchors and the nearest passage only the first occurrence (1).
 *
 * Worst-case cost is linear: a search does O(text + snippet) work per snippet,
 * whatever the text, because the capture (chosen by a source) and the snippets
 * (chosen by a model) are both hostile input. The fast paths of the normal case
 * are kept, each under a work budget proportional to text + snippet length;
 * past the budget a search continues with Knuth-Morris-Pratt, which is linear
 * on any input:
 *
 * - Per snippet, native `indexOf` on at most `probeLength` code units (V8's
 *   `indexOf` on a long pattern can take seconds on a repetitive text in ONE
 *   call, so a long snippet is never handed to it whole), each candidate
 *   confirmed with `startsWith`. Counting overlapping occurrences this way costs
 *   occurrences x snippet length, hence the budget.
 * - When many snippets cite one large capture, a single Rabin-Karp pass keyed on
 *   each snippet's first `window` code units finds every occurrence of every
 *   snippet at once. Every candidate is confirmed with `startsWith`, so a hash
 *   collision can never produce a match. If confirmations exceed their budget
 *   (a repetitive text), the pass is abandoned and each snippet is searched on
 *   its own as above.
 *
 * A search is resumable: `step(budget)` does about `budget` units of work (a
 * unit is about one code unit examined) and returns, so a caller can yield to
 * timers between steps and a deadline can interrupt a long verification.
 */

export interface Found {
  readonly start: number
  readonly occurrences: number
}

/** A search in progress. */
export interface Search {
  /** True once every snippet's result is known. */
  readonly done: boolean
  /** Does at least one and about `budget` units of work; returns the units done. */
  readonly step: (budget: number) => number
  /** One result per snippet, in order; complete once `done`. */
  readonly results: () => Array<Found | undefined>
}

/** Tuning for tests; production calls use the defaults. */
export interface SearchOptions {
  /** Force (true) or forbid (false) the one-pass path; by default chosen by size. */
  readonly onePass?: boolean
  /** Work allowed to the fast paths, as a multiple of text + snippet length (default 2; 0 means KMP at once). */
  readonly fastPathFactor?: number
  /**
   * Stop counting a snippet's occurrences at this many (default: count them all). The Verifier
   * passes 2: ambiguity needs only "more than one", so a snippet's search ends at its second
   * occurrence instead of running to the end of the text. `occurrences` is then min(count, limit).
   */
  readonly countUpTo?: number
}

/** Snippets shorter than this are never keyed in the one pass (their prefixes would be too common). */
const minWindow = 8
const maxWindow = 32
/** The longest pattern handed to native indexOf: measured linear up to 256 on adversarial 16 MiB texts. */
export const probeLength = 64
/** Work charged per native call, on top of the code units it compares. */
const callCost = 8
const slack = 4096

/** The code units of a string (a typed array reads in constant time whatever the string's representation). */
const codeUnits = (s: string): Uint16Array => {
  const units = new Uint16Array(s.length)
  for (let i = 0; i < s.length; i++) units[i] = s.charCodeAt(i)
  return units
}

/** The prefix function of Knuth-Morris-Pratt: longest proper border of each prefix. */
const borders = (pattern: Uint16Array): Int32Array => {
  const m = pattern.length
  const table = new Int32Array(m)
  let k = 0
  for (let i = 1; i < m; i++) {
    const c = pattern[i]!
    while (k > 0 && pattern[k] !== c) k = table[k - 1]!
    if (pattern[k] === c) k++
    table[i] = k
  }
  return table
}

/** One snippet: native probe search under a budget, then KMP from where it stopped. */
class SingleSearch {
  done = false
  first = -1
  count = 0
  private from = 0
  private fastWork = 0
  private readonly fastLimit: number
  private readonly probe: string
  // KMP state, once the fast path's budget is spent.
  private table: Int32Array | undefined
  private pattern: Uint16Array | undefined
  private matched = 0

  constructor(
    private readonly text: string,
    private readonly snippet: string,
    factor: number,
    private readonly limit: number
  ) {
    this.probe = snippet.length <= probeLength ? snippet : snippet.slice(0, probeLength)
    this.fastLimit = factor * (text.length + snippet.length + slack)
    if (snippet.length === 0) {
      // Occurs at every position, including the end.
      this.first = 0
      this.count = Math.min(text.length + 1, limit)
      this.done = true
    }
  }

  step(budget: number): number {
    return this.table === undefined && this.fastWork < this.fastLimit ? this.fast(budget) : this.kmp(budget)
  }

  private fast(budget: number): number {
    const { probe, snippet, text } = this
    const confirm = snippet.length > probe.length
    let used = 0
    while (used < budget && this.fastWork < this.fastLimit) {
      const at = text.indexOf(probe, this.from)
      if (at === -1) {
        used += text.length - this.from
        this.done = true
        return used
      }
      let cost = probe.length + callCost
      let hit = true
      if (confirm) {
        hit = text.startsWith(snippet, at)
        cost += snippet.length
      }
      used += at - this.from + cost
      this.fastWork += cost
      if (hit) {
        if (this.first === -1) this.first = at
        if (++this.count >= this.limit) {
          this.done = true
          return used
        }
      }
      this.from = at + 1
    }
    return Math.max(used, 1)
  }

  private kmp(budget: number): number {
    const text = this.text
    const m = this.snippet.length
    let used = 0
    if (this.table === undefined || this.pattern === undefined) {
      this.pattern = codeUnits(this.snippet)
      this.table = borders(this.pattern)
      used += 2 * m
    }
    const { pattern, table } = this
    const n = text.length
    let i = this.from
    let j = this.matched
    const end = Math.min(n, i + Math.max(1, budget - used))
    for (; i < end; i++) {
      const c = text.charCodeAt(i)
      while (j > 0 && pattern[j] !== c) j = table[j - 1]!
      if (pattern[j] === c) j++
      if (j === m) {
        const at = i - m + 1
        if (this.first === -1) this.first = at
        j = table[m - 1]!
        if (++this.count >= this.limit) {
          i++
          break
        }
      }
    }
    used += i - this.from
    this.from = i
    this.matched = j
    if (i >= n || this.count >= this.limit) {
      this.done = true
      // Not needed any more; other snippets of the same capture may still be searched.
      this.table = undefined
      this.pattern = undefined
    }
    return Math.max(used, 1)
  }

  result(): Found | undefined {
    return this.first === -1 ? undefined : { start: this.first, occurrences: this.count }
  }
}

const BASE = 0x01000193

/**
 * Many snippets in one Rabin-Karp pass. If confirming candidates costs more than
 * its budget, `abandoned` is set and the caller searches the snippets one by one.
 */
class OnePass {
  done = false
  abandoned = false
  private readonly window: number
  private readonly mask: number
  private readonly table: Int32Array
  private readonly used: Uint8Array
  private readonly byHash = new Map<number, Array<number>>()
  private readonly outFactor: number
  private readonly confirmLimit: number
  private confirmWork = 0
  private pos = 0
  private hash = 0
  /** Snippets still short of `limit` occurrences: the pass ends when none is left. */
  private open: number
  readonly first: Int32Array
  readonly counts: Int32Array

  constructor(
    private readonly text: string,
    private readonly snippets: ReadonlyArray<string>,
    readonly indices: ReadonlyArray<number>,
    factor: number,
    private readonly limit: number
  ) {
    this.open = indices.length
    let window = maxWindow
    let total = 0
    for (const i of indices) {
      window = Math.min(window, snippets[i]!.length)
      total += snippets[i]!.length
    }
    this.window = window
    this.confirmLimit = factor * (text.length + total + slack)
    const hashPrefix = (s: string) => {
      let h = 0
      for (let j = 0; j < window; j++) h = (Math.imul(h, BASE) + s.charCodeAt(j)) | 0
      return h
    }
    // Open-addressing set of prefix hashes, and the snippets behind each hash.
    let size = 16
    while (size < indices.length * 4) size <<= 1
    this.mask = size - 1
    this.table = new Int32Array(size)
    this.used = new Uint8Array(size)
    for (const i of indices) {
      const h = hashPrefix(snippets[i]!)
      const group = this.byHash.get(h)
      if (group !== undefined) {
        group.push(i)
        continue
      }
      this.byHash.set(h, [i])
      let slot = (h ^ (h >>> 15)) & this.mask
      while (this.used[slot] === 1) slot = (slot + 1) & this.mask
      this.used[slot] = 1
      this.table[slot] = h
    }
    let outFactor = 1
    for (let j = 1; j < window; j++) outFactor = Math.imul(outFactor, BASE)
    this.outFactor = outFactor
    this.first = new Int32Array(snippets.length).fill(-1)
    this.counts = new Int32Array(snippets.length)
    if (text.length < window) this.done = true
    else this.hash = hashPrefix(text)
  }

  step(budget: number): number {
    const { byHash, first, counts, mask, outFactor, snippets, table, text, used, window } = this
    const n = text.length
    let h = this.hash
    let pos = this.pos
    let work = 0
    while (work < budget) {
      let slot = (h ^ (h >>> 15)) & mask
      while (used[slot] === 1) {
        // Occupied slots probed count too: chosen prefixes could crowd one cluster.
        this.confirmWork++
        work++
        if (table[slot] === h) {
          for (const i of byHash.get(h)!) {
            // Counted to its limit already: nothing more to learn from this snippet.
            if (counts[i]! >= this.limit) continue
            const snippet = snippets[i]!
            this.confirmWork += snippet.length + callCost
            work += snippet.length + callCost
            if (text.startsWith(snippet, pos)) {
              if (first[i] === -1) first[i] = pos
              if (++counts[i]! >= this.limit) this.open--
            }
          }
          break
        }
        slot = (slot + 1) & mask
      }
      work++
      if (this.confirmWork > this.confirmLimit) {
        this.abandoned = true
        this.done = true
        return work
      }
      if (pos + window >= n || this.open === 0) {
        this.done = true
        return work
      }
      h = (Math.imul(h - Math.imul(text.charCodeAt(pos), outFactor), BASE) + text.charCodeAt(pos + window)) | 0
      pos++
    }
    this.hash = h
    this.pos = pos
    return work
  }
}

/**
 * Whether one pass is expected to beat an indexOf scan per snippet. Measured on
 * 16 MiB of text: a pass costs about 30 indexOf-and-count scans, whatever the
 * number of snippets (docs/performance.md).
 */
const worthOnePass = (text: string, snippets: ReadonlyArray<string>) => snippets.length >= 32 && text.length >= 64 * 1024

/**
 * The search of one snippet without one pass (a capture cited once, the common case): the same
 * steps, work and result as `start`'s loop over its single searches, without its bookkeeping for
 * many (a verification of a thousand small captures makes a thousand of these).
 */
class OneSearch implements Search {
  done = false
  constructor(private readonly single: SingleSearch) {}

  step(budget: number): number {
    let work = 0
    do {
      if (this.single.done) {
        this.done = true
        break
      }
      work += this.single.step(budget - work)
    } while (work < budget)
    return Math.max(work, 1)
  }

  results(): Array<Found | undefined> {
    return [this.single.result()]
  }
}

/** Start searching `text` for every snippet; drive it with `step`. */
export const start = (text: string, snippets: ReadonlyArray<string>, options: SearchOptions = {}): Search => {
  const factor = options.fastPathFactor ?? 2
  const limit = options.countUpTo ?? Infinity
  if (snippets.length === 1 && options.onePass !== true) return new OneSearch(new SingleSearch(text, snippets[0]!, factor, limit))
  // A snippet cited more than once is searched once.
  const firstOf = snippets.length === 1 ? undefined : new Map<string, number>()
  const sameAs = firstOf === undefined ? [0] : snippets.map((snippet, i) => {
    const first = firstOf.get(snippet)
    if (first !== undefined) return first
    firstOf.set(snippet, i)
    return i
  })
  const singles: Array<SingleSearch | undefined> = new Array(snippets.length)
  const long: Array<number> = []
  const onePass = options.onePass ?? worthOnePass(text, snippets)
  snippets.forEach((snippet, i) => {
    if (sameAs[i] !== i) return
    if (onePass && snippet.length >= minWindow) long.push(i)
    else singles[i] = new SingleSearch(text, snippet, factor, limit)
  })
  let pass = long.length === 0 ? undefined : new OnePass(text, snippets, long, factor, limit)
  let next = 0 // the first single search that may not be done
  let done = false
  return {
    get done() {
      return done
    },
    step: (budget) => {
      let work = 0
      do {
        if (pass !== undefined && !pass.done) {
          work += pass.step(budget - work)
          if (pass.abandoned) {
            // A repetitive text: each long snippet on its own, each linear.
            for (const i of pass.indices) singles[i] = new SingleSearch(text, snippets[i]!, factor, limit)
            pass = undefined
            next = 0
          }
          continue
        }
        while (next < singles.length && (singles[next] === undefined || singles[next]!.done)) next++
        if (next === singles.length) {
          done = true
          break
        }
        work += singles[next]!.step(budget - work)
      } while (work < budget)
      return Math.max(work, 1)
    },
    results: () =>
      sameAs.map((i) => {
        const single = singles[i]
        if (single !== undefined) return single.result()
        if (pass === undefined || pass.first[i] === -1) return undefined
        return { start: pass.first[i]!, occurrences: pass.counts[i]! }
      })
  }
}

/** The whole search at once, without yielding. */
export const searchAll = (
  text: string,
  snippets: ReadonlyArray<string>,
  options?: SearchOptions
): Array<Found | undefined> => {
  const search = start(text, snippets, options)
  while (!search.done) search.step(Number.MAX_SAFE_INTEGER)
  return search.results()
}
