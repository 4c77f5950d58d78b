/**
 * The text's trigram ids for the coarse pass (CoarsePass.ts): for each position of the normalised
 * text, 1 + the index of the trigram starting there among the patterns' distinct trigrams, or 0 when
 * it is in no pattern; and, in the same loop, the packed chunk counts of the first eight patterns.
 *
 * Two routes to the same ids. When the patterns hold at most `maxDirectAlphabet` distinct code
 * units (prose: letters, digits, a few signs), each code unit is given a small code (0 for a unit in
 * no pattern) and a trigram's three codes index a table of ids directly: one table read per code
 * unit and a shift, no hash and no compare. Otherwise each trigram is looked up in the hash table
 * (`TrigramTable`). test/anchor.nearest.codes.test.ts checks that both give the same ids.
 *
 * @since 0.6.0
 */

/** Code units per chunk of the packed counts: at most 8, so a pattern's count in a chunk fits in four bits. */
export const chunk = 8
/** log2(`chunk`): the chunk of code unit i is i >> chunkShift. */
export const chunkShift = 3

/**
 * The most distinct code units the patterns may hold for the direct route: codes of 6 bits, so the
 * table has 2^18 ids (512 KiB), plus 64 KiB of codes, made per look-up of the text and dropped after.
 */
export const maxDirectAlphabet = 63

/**
 * Open-addressing table from a trigram (three code units) to its index among the snippet's
 * distinct trigrams. Integer keys (the first two units packed, the third apart), so a lookup is
 * a multiply-shift hash and one or two integer compares.
 */
export class TrigramTable {
  private readonly head: Int32Array
  private readonly tail: Int32Array
  private readonly values: Int16Array
  /** 1 where a trigram whose home is this slot sits further on. */
  private readonly displaced: Uint8Array
  private readonly shift: number
  private readonly mask: number
  size = 0
  constructor(capacity: number) {
    let bits = 6
    while (1 << bits < capacity * 4) bits++
    this.head = new Int32Array(1 << bits)
    this.tail = new Int32Array(1 << bits).fill(-1)
    this.values = new Int16Array(1 << bits)
    this.displaced = new Uint8Array(1 << bits)
    this.shift = 32 - bits
    this.mask = (1 << bits) - 1
  }
  private home(head: number, c2: number): number {
    return (Math.imul(head ^ Math.imul(c2, 0x85ebca77), 0x9e3779b1) >>> this.shift) & this.mask
  }
  private slot(c0: number, c1: number, c2: number): number {
    const head = (c0 << 16) | c1
    let h = this.home(head, c2)
    while (this.tail[h] !== -1 && (this.tail[h] !== c2 || this.head[h] !== head)) h = (h + 1) & this.mask
    return h
  }
  /** The index of the trigram, added if new. */
  add(c0: number, c1: number, c2: number): number {
    const h = this.slot(c0, c1, c2)
    if (this.tail[h] !== -1) return this.values[h]!
    const home = this.home((c0 << 16) | c1, c2)
    if (home !== h) this.displaced[home] = 1
    this.head[h] = (c0 << 16) | c1
    this.tail[h] = c2
    this.values[h] = this.size
    return this.size++
  }
  /** The index of the trigram, or -1. */
  get(c0: number, c1: number, c2: number): number {
    const h = this.slot(c0, c1, c2)
    return this.tail[h] === -1 ? -1 : this.values[h]!
  }
  /**
   * 1 + the index of the trigram `head` (the first two units packed) + `c2`, or 0. Most look-ups
   * read one slot without a branch on what they find; only a slot where another trigram of the same
   * home was displaced from probes further.
   */
  id(head: number, c2: number): number {
    const h = (Math.imul(head ^ Math.imul(c2, 0x85ebca77), 0x9e3779b1) >>> this.shift) & this.mask
    if (this.displaced[h] !== 0) return this.get(head >>> 16, head & 0xffff, c2) + 1
    // differ is 0 exactly when the slot holds this trigram; (differ | -differ) >> 31 is then 0, else -1.
    const differ = (this.tail[h]! ^ c2) | (this.head[h]! ^ head)
    return (this.values[h]! + 1) & ~((differ | -differ) >> 31)
  }
}


/** The patterns' distinct trigrams in one table, and each pattern's trigram ids (1 + index) in it. */
export const patternTable = (patterns: ReadonlyArray<string>) => {
  const table = new TrigramTable(patterns.reduce((sum, p) => sum + p.length - 2, 0))
  const patternIds = patterns.map((pattern) => {
    const ids = new Uint16Array(pattern.length - 2)
    for (let i = 0; i + 3 <= pattern.length; i++) {
      ids[i] = table.add(pattern.charCodeAt(i), pattern.charCodeAt(i + 1), pattern.charCodeAt(i + 2)) + 1
    }
    return ids
  })
  return { table, patternIds }
}

/** A text's trigram ids and the packed chunk counts of the first word's patterns. */
export interface TextIds {
  readonly ids: Uint16Array
  readonly packed: Int32Array
}

/** Which route gave the ids. */
export type Route = "direct" | "hashed"

/**
 * The direct route's tables, or undefined when the patterns hold more than `maxDirectAlphabet`
 * distinct code units. `patternIds[k][i]` is the id of pattern k's trigram at i (as in the hash table).
 */
const directTables = (patterns: ReadonlyArray<string>, patternIds: ReadonlyArray<Uint16Array>) => {
  const codeOf = new Uint8Array(0x10000)
  let alphabet = 0
  for (const pattern of patterns) {
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern.charCodeAt(i)
      if (codeOf[c] !== 0) continue
      if (alphabet === maxDirectAlphabet) return undefined
      codeOf[c] = ++alphabet
    }
  }
  // Codes 1..alphabet (0: a unit in no pattern) in `width` bits; a trigram with a 0 code is in no pattern.
  const width = Math.max(1, 32 - Math.clz32(alphabet))
  const idOf = new Uint16Array(1 << (3 * width))
  patterns.forEach((pattern, k) => {
    const ids = patternIds[k]!
    for (let i = 0; i + 3 <= pattern.length; i++) {
      const key = (((codeOf[pattern.charCodeAt(i)]! << width) | codeOf[pattern.charCodeAt(i + 1)]!) << width) |
        codeOf[pattern.charCodeAt(i + 2)]!
      idOf[key] = ids[i]!
    }
  })
  return { codeOf, idOf, width }
}

/**
 * The direct route. Written out for the eight code units of a chunk (`chunk` is 8): V8 runs the
 * written-out body in about two thirds of the time of a loop over each chunk's units, the
 * chunk's end computed each time; the units past the last whole chunk take the plain loop.
 */
const directIds = (text: string, tables: NonNullable<ReturnType<typeof directTables>>, bits: Int32Array): TextIds => {
  const { codeOf, idOf, width } = tables
  const keyMask = (1 << (3 * width)) - 1
  const count = text.length - 2
  const ids = new Uint16Array(count)
  const chunks = Math.ceil(count / chunk)
  const packed = new Int32Array(chunks)
  // The whole chunks: trigrams 8j to 8j + 7, whose last units are 8j + 2 to 8j + 9.
  const whole = count >> chunkShift
  // The codes of the trigram before i's first unit and of its first two, in 3 × width bits.
  let key = (codeOf[text.charCodeAt(0)]! << width) | codeOf[text.charCodeAt(1)]!
  let i = 0
  // At most `chunk` (8) per pattern in a chunk: its four bits never carry into the next pattern's.
  for (let j = 0; j < whole; j++, i += 8) {
    key = ((key << width) | codeOf[text.charCodeAt(i + 2)]!) & keyMask
    let id = idOf[key]!
    ids[i] = id
    let sum = bits[id]!
    key = ((key << width) | codeOf[text.charCodeAt(i + 3)]!) & keyMask
    id = idOf[key]!
    ids[i + 1] = id
    sum += bits[id]!
    key = ((key << width) | codeOf[text.charCodeAt(i + 4)]!) & keyMask
    id = idOf[key]!
    ids[i + 2] = id
    sum += bits[id]!
    key = ((key << width) | codeOf[text.charCodeAt(i + 5)]!) & keyMask
    id = idOf[key]!
    ids[i + 3] = id
    sum += bits[id]!
    key = ((key << width) | codeOf[text.charCodeAt(i + 6)]!) & keyMask
    id = idOf[key]!
    ids[i + 4] = id
    sum += bits[id]!
    key = ((key << width) | codeOf[text.charCodeAt(i + 7)]!) & keyMask
    id = idOf[key]!
    ids[i + 5] = id
    sum += bits[id]!
    key = ((key << width) | codeOf[text.charCodeAt(i + 8)]!) & keyMask
    id = idOf[key]!
    ids[i + 6] = id
    sum += bits[id]!
    key = ((key << width) | codeOf[text.charCodeAt(i + 9)]!) & keyMask
    id = idOf[key]!
    ids[i + 7] = id
    sum += bits[id]!
    packed[j] = sum
  }
  // The last, partial chunk (1 to 7 trigrams), if any.
  if (whole < chunks) {
    let sum = 0
    for (; i < count; i++) {
      key = ((key << width) | codeOf[text.charCodeAt(i + 2)]!) & keyMask
      const id = idOf[key]!
      ids[i] = id
      sum += bits[id]!
    }
    packed[whole] = sum
  }
  return { ids, packed }
}

const hashedIds = (text: string, table: TrigramTable, bits: Int32Array): TextIds => {
  const count = text.length - 2
  const ids = new Uint16Array(count)
  const packed = new Int32Array(Math.ceil(count / chunk))
  // The first two code units of the trigram at i, packed.
  let head = (text.charCodeAt(0) << 16) | text.charCodeAt(1)
  let sum = 0
  for (let i = 0; i < count; i++) {
    const c2 = text.charCodeAt(i + 2)
    const id = table.id(head, c2)
    ids[i] = id
    sum += bits[id]!
    if ((i & (chunk - 1)) === chunk - 1) {
      packed[i >> chunkShift] = sum
      sum = 0
    }
    head = ((head & 0xffff) << 16) | c2
  }
  if ((count & (chunk - 1)) !== 0) packed[count >> chunkShift] = sum
  return { ids, packed }
}

/**
 * The trigram ids of `text` (at least 3 code units) against the patterns' `table`, and the chunk
 * sums of `bits[id]` (the packed counts). The direct route when the patterns' alphabet allows it
 * and `hashedOnly` is not set (tests compare the routes); the same ids either way.
 */
export const textIds = (
  text: string,
  patterns: ReadonlyArray<string>,
  patternIds: ReadonlyArray<Uint16Array>,
  table: TrigramTable,
  bits: Int32Array,
  hashedOnly = false
): TextIds & { readonly route: Route } => {
  const tables = hashedOnly ? undefined : directTables(patterns, patternIds)
  return tables === undefined ? { ...hashedIds(text, table, bits), route: "hashed" } : { ...directIds(text, tables, bits), route: "direct" }
}
