/**
 * Sentences of an answer, and which of them need a citation.
 *
 * The rule (documented in docs/answers.md, configured by `answers.needsCitation`):
 *
 * 1. A sentence that states a quantity needs a citation, whatever its length or
 *    form (heading, question, lead-in included): a figure reaches the reader
 *    wherever it stands. A quantity is a digit of any script (`\p{N}`: `90`,
 *    `½`, `Ⅻ`) whose run does not start right after a letter (`Q3`, `H2O`, `EVI11` are names), a currency sign (`\p{Sc}`), `%` `‰` `‱`, a number or
 *    fraction word (`two` … `ninety`, `hundred` … `trillion`, `dozen`, `half`,
 *    `third`, `percent`, `twice`, `double`, `triple`, `quadruple`,
 *    `halved`, `majority`, `minority`, `twofold` … `thousandfold`), or a month name (`May`
 *    capitalised).
 * 2. Any other sentence needs a citation when it has at least `minLength` code
 *    points (default 20) and is not of an exempt kind: a Markdown heading, a
 *    question, a lead-in ending with `:`, framing (every word from the
 *    answer-talk vocabulary below) or a statement that the sources do not say
 *    something (a source word and a negation).
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { AnswerLimitExceeded, UncitedSentence } from "../Errors.js"
import { type CitationRule, defaultCitationRule, limits, type UncitedText } from "./Records.js"

/** Sentences of a piece of prose: split after `.`, `!` or `?` followed by whitespace; trimmed, blanks dropped. */
export const sentences = (text: string): Array<string> => {
  const out: Array<string> = []
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    // . ! ?
    if ((c === 46 || c === 33 || c === 63) && i + 1 < text.length && /\s/.test(text[i + 1]!)) {
      // Never blank: it ends with the mark itself.
      out.push(text.slice(start, i + 1).trim())
      start = i + 1
    }
  }
  const rest = text.slice(start).trim()
  if (rest !== "") out.push(rest)
  return out
}

export const codePointLength = (s: string): number => {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) n--
  }
  return n
}

// A digit inside a word ("EVI1", "Q3", "H2O", "MP3") names something; a digit standing free states a number.
const quantitySign = /(?<![\p{L}\p{N}])\p{N}|[\p{Sc}%‰‱]/u
const quantityWord = new RegExp(
  "\\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|" +
    "eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundreds?|thousands?|millions?|billions?|" +
    "trillions?|dozens?|half|halves|halved|thirds?|percent|percentage|per cent|twice|doubled?|doubles|" +
    "tripled?|triples|quadrupled?|quadruples|majority|minority|(?:two|three|four|five|six|seven|eight|nine|ten|hundred|thousand)fold)\\b",
  "i"
)
const month = /\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b/

/** Whether a sentence states a number, date, amount or named quantity (rule 1). */
export const statesQuantity = (sentence: string): boolean =>
  quantitySign.test(sentence) || quantityWord.test(sentence) || month.test(sentence)

const words = (sentence: string): Array<string> => sentence.toLowerCase().match(/[\p{L}\p{M}]+/gu) ?? []

/** Words of sentences that only frame the answer ("Based on the documents, here is a summary."). */
const framingWords = new Set(
  ("a about above after all also an and answer are as at based below brief briefly certainly course documents document " +
    "find findings follow following follows for found from given glad go have help here highlights i in information is it " +
    "key let look looked main material materials me my of ok okay on overview points provided question questions read " +
    "reading request response review reviewed s source sources summarise summarize summary sum supplied sure text texts " +
    "that the these this those to up us we what with you your according available attached excerpts passages captures " +
    "report reports know if need needs more detail details any further other anything else happy can will be please " +
    "hope helps useful both there say says said show shows")
    .split(" ")
)

const sourceWords = new Set(
  "source sources document documents text texts capture captures material materials excerpt excerpts passage passages"
    .split(" ")
)
const negations = new Set("not no nothing none neither nor never without t cannot unavailable unclear silent".split(" "))

/** Which exempt kind a quantity-free sentence is, if any. */
const kindOf = (s: string): CitationRule["exempt"][number] | undefined => {
  if (s.startsWith("#")) return "heading"
  if (s.endsWith("?")) return "question"
  if (s.endsWith(":")) return "lead-in"
  const ws = words(s)
  if (ws.length > 0 && ws.every((w) => framingWords.has(w))) return "framing"
  if (ws.some((w) => sourceWords.has(w)) && ws.some((w) => negations.has(w))) return "unavailable"
  return undefined
}

/** Whether an uncited sentence needs a citation under the rule (a finding when it has none). */
export const needsCitation = (sentence: string, rule: CitationRule = defaultCitationRule): boolean => {
  const s = sentence.trim()
  if (s === "") return false
  if (statesQuantity(s)) return true
  if (codePointLength(s) < rule.minLength) return false
  const kind = kindOf(s)
  return kind === undefined || !rule.exempt.includes(kind)
}

/** The `UncitedSentence` findings of an answer's uncited text (all of them: see `boundedFindings`). */
export const uncitedFindings = (
  uncited: ReadonlyArray<UncitedText>,
  rule: CitationRule = defaultCitationRule
): Array<UncitedSentence> =>
  uncited.flatMap((u) =>
    sentences(u.text).filter((s) => needsCitation(s, rule)).map((sentence) => new UncitedSentence({ sentence, line: u.line }))
  )

/**
 * The findings, or `AnswerLimitExceeded` past `limits.maxUncitedFindings` (the search stops at one
 * more): "1. 1. 1. …" would otherwise make millions of findings and a reply to match.
 */
export const boundedFindings = (
  uncited: ReadonlyArray<UncitedText>,
  rule: CitationRule = defaultCitationRule
): Either.Either<Array<UncitedSentence>, AnswerLimitExceeded> => {
  const out: Array<UncitedSentence> = []
  for (const u of uncited) {
    for (const sentence of sentences(u.text)) {
      if (!needsCitation(sentence, rule)) continue
      if (out.length === limits.maxUncitedFindings) {
        return Either.left(new AnswerLimitExceeded({ limit: "uncited-sentences", max: limits.maxUncitedFindings, received: out.length + 1 }))
      }
      out.push(new UncitedSentence({ sentence, line: u.line }))
    }
  }
  return Either.right(out)
}
