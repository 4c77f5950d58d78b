/**
 * The EVI1 line scanners: one body line as text and citation segments, one appendix evidence line
 * `cX|n|"quote"`. Linear in the line (no backtracking regex on attacker-chosen lengths).
 */
import * as Either from "effect/Either"
import type { Evi1Issue } from "../../Errors.js"
import type { Evidence, Segment } from "./Records.js"

const isDigit = (c: number) => c >= 48 && c <= 57
const maxSourceDigits = 6
const maxClaimDigits = 9

/** `[n]` at `at`: the number and the index after `]`, or undefined. Leading zeros are not markers. */
const sourceMarkerAt = (line: string, at: number): { readonly n: number; readonly next: number } | undefined => {
  if (line.charCodeAt(at) !== 91) return undefined // [
  let i = at + 1
  while (i < line.length && isDigit(line.charCodeAt(i)) && i - at - 1 < maxSourceDigits + 1) i++
  const digits = i - at - 1
  if (digits === 0 || digits > maxSourceDigits || line.charCodeAt(i) !== 93) return undefined // ]
  if (digits > 1 && line.charCodeAt(at + 1) === 48) return undefined
  return { n: Number(line.slice(at + 1, i)), next: i + 1 }
}

/** `{cX}` at `at` (X: 1 to 9 digits): the id `cX` and the index after `}`, or undefined. */
const claimMarkerAt = (line: string, at: number): { readonly id: string; readonly next: number } | undefined => {
  if (line.charCodeAt(at) !== 123 || line.charCodeAt(at + 1) !== 99) return undefined // {c
  let i = at + 2
  while (i < line.length && isDigit(line.charCodeAt(i)) && i - at - 2 < maxClaimDigits + 1) i++
  const digits = i - at - 2
  if (digits === 0 || digits > maxClaimDigits || line.charCodeAt(i) !== 125) return undefined // }
  return { id: line.slice(at + 1, i), next: i + 1 }
}

/**
 * A body line as segments, with its issues. Linear: every index is visited a bounded number of times.
 * The scan stops after `maxCites` citation groups (the caller's remaining claim budget).
 */
export const parseBodyLine = (
  line: string,
  lineNo: number,
  issues: { push: (issue: Evi1Issue) => void },
  maxCites: number = Infinity
): Array<Segment> => {
  const out: Array<Segment> = []
  let cites = 0
  let textStart = 0
  let i = 0
  while (i < line.length) {
    const c = line.charCodeAt(i)
    if (c === 91) {
      const sources: Array<number> = []
      let k = i
      for (let m = sourceMarkerAt(line, k); m !== undefined; m = sourceMarkerAt(line, k)) {
        sources.push(m.n)
        k = m.next
      }
      if (sources.length === 0) {
        i++
        continue
      }
      const claim = claimMarkerAt(line, k)
      if (claim === undefined) {
        i = k // a bracketed number in prose, not a citation
        continue
      }
      if (i > textStart) out.push({ _tag: "Text", text: line.slice(textStart, i) })
      const seen = new Set<number>()
      const repeated = sources.find((n) => seen.size === seen.add(n).size)
      if (repeated !== undefined) {
        issues.push({ _tag: "Evi1MalformedLine", line: lineNo, detail: `source [${repeated}] is repeated in the citation group of {${claim.id}}` })
      }
      out.push({ _tag: "Cite", sources, claimId: claim.id, line: lineNo })
      i = textStart = claim.next
      if (++cites > maxCites) return out
      continue
    }
    if (c === 123) {
      const claim = claimMarkerAt(line, i)
      if (claim !== undefined) {
        issues.push({ _tag: "Evi1OrphanMarker", line: lineNo, claimId: claim.id })
        i = claim.next
        continue
      }
    }
    i++
  }
  if (textStart < line.length || out.length === 0) out.push({ _tag: "Text", text: line.slice(textStart) })
  return out
}

export const manifestPrefix = "MANIFEST "

/** An evidence line `cX|n|"quote"`, or why it is malformed. */
export const parseEvidenceLine = (line: string, lineNo: number): Either.Either<Evidence, string> => {
  const bar1 = line.indexOf("|")
  if (bar1 === -1) return Either.left("expected cX|n|\"quote\"")
  const claimId = line.slice(0, bar1)
  if (!/^c[0-9]{1,9}$/.test(claimId)) {
    return Either.left(`claim id ${JSON.stringify(claimId.slice(0, 20))} is not cX (X: 1 to 9 digits)`)
  }
  const bar2 = line.indexOf("|", bar1 + 1)
  if (bar2 === -1) return Either.left("expected cX|n|\"quote\"")
  const number = line.slice(bar1 + 1, bar2)
  if (!/^[1-9][0-9]{0,5}$/.test(number) && number !== "0") {
    return Either.left(`source ${JSON.stringify(number.slice(0, 20))} is not a source number`)
  }
  if (line.charCodeAt(bar2 + 1) !== 34 || line.length < bar2 + 3 || line.charCodeAt(line.length - 1) !== 34) {
    return Either.left("the quote must be one double-quoted string ending the line")
  }
  let quote = ""
  let runStart = bar2 + 2
  const end = line.length - 1
  for (let i = runStart; i < end; i++) {
    const c = line.charCodeAt(i)
    if (c === 34) return Either.left(`unescaped " inside the quote (column ${i + 1})`)
    if (c === 13) return Either.left("carriage return inside the quote (write \\n for a line break)")
    if (c === 92) {
      const next = line[i + 1]
      if (i + 1 >= end) return Either.left("the quote ends with an unfinished escape")
      if (next !== "n" && next !== "\"" && next !== "\\") {
        return Either.left(`unknown escape \\${next} (only \\", \\\\ and \\n)`)
      }
      quote += line.slice(runStart, i) + (next === "n" ? "\n" : next)
      i++
      runStart = i + 1
    }
  }
  quote += line.slice(runStart, end)
  if (!/\S/u.test(quote)) return Either.left("the quote is empty or blank")
  return Either.right({ claimId, source: Number(number), quote, line: lineNo })
}
