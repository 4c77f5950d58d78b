/**
 * Hostile captures for the nearest-passage search, each with the quotes (at most 8, all diagnosed)
 * asked of it: the bench's kind of prose, CRLF, long runs of one character, astral characters, a
 * large alphabet (hashed trigram ids); near misses, runs, empty-ish quotes. Used by
 * test/anchor.nearest.shared3.test.ts and test/anchor.coarsePass.equivalence.test.ts.
 */
import { random } from "./seeded.js"

export const prose = (size: number, seed: number, lineBreak: string) => {
  const words = ["net", "sales", "units", "quarter", "Inventory", "rose", "fell", "by", "to", "the", "Q3", "per", "cent"]
  const next = random(seed)
  let text = ""
  while (text.length < size) {
    const word = next() % 7 === 0 ? String(next() % 100_000) : words[next() % words.length]!
    text += next() % 13 === 0 ? `${word}.${lineBreak}` : `${word} `
  }
  return text
}

/** Hostile captures: each with the quotes (at most 8, all diagnosed) asked of it. */
export const hostileCaptures = (): ReadonlyArray<{ readonly name: string; readonly text: string; readonly quotes: (text: string) => Array<string> }> => {
  const nearMisses = (seed: number) => (text: string) => {
    const next = random(seed)
    return Array.from({ length: 6 }, (_, k) => {
      const start = next() % (text.length - 80)
      const exact = text.slice(start, start + 40 + (next() % 40))
      return k % 3 === 0 ? `absent ${k} ${exact}` : k % 3 === 1 ? exact.replace(/\d/, "#") + " x" : exact.toUpperCase() + " not"
    })
  }
  const emptyish = ["\u00ad\u200b\u00adx", "ab", "\u200b\u200b q \u200b", "zz"]
  return [
    { name: "prose", text: prose(40_000, 1, "\n"), quotes: (t) => [...nearMisses(2)(t).slice(0, 5), ...emptyish.slice(0, 3)] },
    { name: "prose, CRLF", text: prose(30_000, 3, "\r\n"), quotes: (t) => [...nearMisses(4)(t), "net sales\r\nrose by 12 per cent absent", "\r\n\r\n\r\n\r\nx"] },
    {
      name: "a long run of one character",
      text: prose(5_000, 5, "\n") + "a".repeat(30_000) + prose(5_000, 6, "\n"),
      quotes: () => ["a".repeat(200) + "b", "b" + "a".repeat(60), "aaaaaaaaaaaaaaaaaaaaaaab aaaa", "a".repeat(999) + "c", "ab"]
    },
    {
      name: "astral characters",
      text: Array.from({ length: 3_000 }, (_, k) => ["\u{1F600}", "\u{10348}", "net ", "Sales ", "\u{1D400}x "][k % 5]!).join(""),
      quotes: () => ["\u{1F600}\u{10348}net sales \u{1D400}x \u{1F600}absent", "\u{10348}net Sales \u{1D400}y \u{1F600}\u{10348}", "\u{1F600}\u{1F600}"]
    },
    {
      name: "a large alphabet (hashed trigram ids)",
      text: Array.from({ length: 20_000 }, (_, k) => String.fromCharCode(0x4e00 + ((k * 7919) % 200))).join(""),
      quotes: (t) => [t.slice(1_000, 1_090) + "\u00e9", "\u00e9" + t.slice(5_000, 5_070), t.slice(9_000, 9_040).split("").reverse().join("")]
    }
  ]
}
