/**
 * Evaluation rows for the provider adapters: the same answer (claims, sources, quotes) as a
 * Bedrock Converse, Gemini, OpenAI Responses and Cohere v2 response, each decoded, bound to the
 * manifest and verified through the Answers service, against the same answer as citegate.answer/1
 * JSON. Bedrock carries character spans, so its baseline carries the same `chars`; OpenAI and Cohere
 * are document-level (policy "document": no matching), measured against the quote path all the same.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as zlib from "node:zlib"
import * as Answer from "../src/answer/Answer.js"
import * as Anthropic from "../src/answer/Anthropic.js"
import * as AnthropicSse from "../src/answer/AnthropicSse.js"
import * as Bedrock from "../src/answer/Bedrock.js"
import * as BedrockStream from "../src/answer/BedrockStream.js"
import * as Cohere from "../src/answer/Cohere.js"
import * as Gemini from "../src/answer/Gemini.js"
import * as OpenAI from "../src/answer/OpenAI.js"
import type { BoundAnswer } from "../src/answer/Records.js"
import * as Config from "../src/Config.js"
import { makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import * as Manifest from "../src/Manifest.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as Policy from "../src/verify/Policy.js"
import * as Verifier from "../src/verify/Verifier.js"

/** AWS event stream messages (prelude, headers, payload, CRC32s) of ConverseStream events for `blocks`. */
const eventStreamOf = (blocks: ReadonlyArray<any>): Uint8Array => {
  const message = (eventType: string, payload: unknown) => {
    const headers = Buffer.concat([[":event-type", eventType], [":content-type", "application/json"], [":message-type", "event"]].map(([name, value]) => {
      const n = Buffer.from(name!)
      const v = Buffer.from(value!)
      const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length)
      h.writeUInt8(n.length, 0)
      n.copy(h, 1)
      h.writeUInt8(7, 1 + n.length)
      h.writeUInt16BE(v.length, 2 + n.length)
      v.copy(h, 4 + n.length)
      return h
    }))
    const body = Buffer.from(JSON.stringify(payload))
    const total = 12 + headers.length + body.length + 4
    const prelude = Buffer.alloc(8)
    prelude.writeUInt32BE(total, 0)
    prelude.writeUInt32BE(headers.length, 4)
    const preludeCrc = Buffer.alloc(4)
    preludeCrc.writeUInt32BE(zlib.crc32(prelude), 0)
    const head = Buffer.concat([prelude, preludeCrc, headers, body])
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(zlib.crc32(head), 0)
    return Buffer.concat([head, crc])
  }
  const events: Array<Buffer> = [message("messageStart", { role: "assistant" })]
  blocks.forEach((block, contentBlockIndex) => {
    events.push(message("contentBlockDelta", { contentBlockIndex, delta: { text: block.citationsContent.content[0].text } }))
    for (const citation of block.citationsContent.citations) events.push(message("contentBlockDelta", { contentBlockIndex, delta: { citation } }))
    events.push(message("contentBlockStop", { contentBlockIndex }))
  })
  events.push(message("messageStop", { stopReason: "end_turn" }))
  return new Uint8Array(Buffer.concat(events))
}

export interface ProviderRow {
  readonly name: string
  readonly citegateMs: number
  readonly rawMs: number
  readonly ratio: number
  readonly target: number
  /** CPU time of the process (user + system, so GC threads count too), median per run. */
  readonly citegateCpuMs: number
  readonly rawCpuMs: number
  readonly cpuRatio: number
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

export const benchProviders = async (options: {
  readonly smoke: boolean
  readonly runs: number
  readonly warmups: number
  readonly makeText: (seed: number, bytes: number) => string
}): Promise<Array<ProviderRow>> => {
  const shape = options.smoke
    ? { name: "smoke 10 claims x 2 citations, C=2 S=4KiB", claims: 10, per: 2, captures: 2, size: 4 * 1024 }
    : { name: "500 claims x 2 citations, C=10 S=256KiB", claims: 500, per: 2, captures: 10, size: 256 * 1024 }
  const directory = await fsp.mkdtemp(path.join(os.tmpdir(), "citegate-bench-providers-"))
  try {
    const accessedAt = "2026-10-01T09:30:00.000Z" as Rfc3339Utc
    const sources = Array.from({ length: shape.captures }, (_, i) => `https://bench.example.com/p-${i}.txt` as SourceUrl)
    const records = sources.map((source, i) => makeCaptureRecord({ source, text: options.makeText(i + 7, shape.size), accessedAt, contentType: "text/plain" }))
    await Effect.runPromise(Effect.gen(function*() {
      const store = yield* CaptureStore.makeFileSystem({ directory })
      for (const record of records) yield* store.write(record)
    }))
    let state = 4242
    const next = () => (state = (state * 1664525 + 1013904223) >>> 0)
    const claims = Array.from({ length: shape.claims }, (_, c) => ({
      text: `Claim ${c + 1} states a fact from the sources.`,
      citations: Array.from({ length: shape.per }, (_, k) => {
        const n = ((c * shape.per + k) % shape.captures) + 1
        const text = records[n - 1]!.text
        const start = next() % (text.length - 60)
        return { n, start, end: start + 60, quote: text.slice(start, start + 60) }
      })
    }))
    const config = await Effect.runPromise(Config.decode({
      sources,
      labels: ["x"],
      answers: { documentIds: sources.map((source, i) => ({ source, id: `doc-${i + 1}` })) }
    }))
    const storeLayer = CaptureStore.layerFileSystem({ directory })
    const serviceFor = async (citations: "quote" | "document") =>
      Context.get(
        await Effect.runPromise(Effect.scoped(Layer.build(
          Answer.layer({ mode: "drop", uncited: "report", citations }).pipe(
            Layer.provide(Verifier.layer),
            Layer.provide(Policy.layer(config)),
            Layer.provide(storeLayer)
          )
        ))),
        Answer.Answers
      )
    const quoteAnswers = await serviceFor("quote")
    const documentAnswers = await serviceFor("document")
    const manifest = await Effect.runPromise(Manifest.make(config).pipe(Effect.provide(storeLayer)))
    const o = { manifestDigest: manifest.digest }
    const total = shape.claims * shape.per

    const json = (withChars: boolean) =>
      JSON.stringify({
        format: "citegate.answer/1",
        manifest: manifest.digest,
        claims: claims.map((claim, i) => ({
          id: `c${i}`,
          text: claim.text,
          citations: claim.citations.map((c) => ({ source: c.n, quote: c.quote, ...(withChars ? { chars: { start: c.start, end: c.end } } : {}) }))
        }))
      })
    const bedrock = JSON.stringify({
      output: { message: { role: "assistant", content: claims.map((claim) => ({
        citationsContent: {
          content: [{ text: claim.text }],
          citations: claim.citations.map((c) => ({
            sourceContent: [{ text: c.quote }],
            location: { documentChar: { documentIndex: c.n - 1, start: c.start, end: c.end } }
          }))
        }
      })) } }
    })
    // Anthropic: one text block per claim, char_location citations (document_index = source - 1).
    const anthropicBlocks = claims.map((claim) => ({
      type: "text",
      text: claim.text,
      citations: claim.citations.map((c) => ({
        type: "char_location", cited_text: c.quote, document_index: c.n - 1, document_title: null, start_char_index: c.start, end_char_index: c.end
      }))
    }))
    const anthropic = JSON.stringify({ id: "msg", type: "message", role: "assistant", content: anthropicBlocks })
    // The same blocks as the Messages stream sends them: start, one citations_delta each, the text, stop.
    const sse = (event: unknown) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`
    const anthropicSse = [
      sse({ type: "message_start", message: { id: "msg", type: "message", role: "assistant", content: [] } }),
      ...anthropicBlocks.flatMap((block, index) => [
        sse({ type: "content_block_start", index, content_block: { type: "text", text: "", citations: [] } }),
        ...block.citations.map((citation) => sse({ type: "content_block_delta", index, delta: { type: "citations_delta", citation } })),
        sse({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }),
        sse({ type: "content_block_stop", index })
      ]),
      sse({ type: "message_delta", delta: { stop_reason: "end_turn" } }),
      sse({ type: "message_stop" })
    ].join("")
    const answerText = claims.map((c) => c.text).join(" ")
    const positions: Array<number> = []
    claims.reduce((at, claim) => (positions.push(at), at + claim.text.length + 1), 0)
    const gemini = JSON.stringify({
      candidates: [{
        content: { parts: [{ text: answerText }] },
        groundingMetadata: {
          groundingChunks: claims.flatMap((claim) => claim.citations.map((c) => ({ retrievedContext: { uri: sources[c.n - 1], text: c.quote } }))),
          groundingSupports: claims.map((claim, i) => ({
            segment: { startIndex: Buffer.byteLength(answerText.slice(0, positions[i]!)), endIndex: Buffer.byteLength(answerText.slice(0, positions[i]! + claim.text.length)) },
            groundingChunkIndices: claim.citations.map((_, k) => i * shape.per + k)
          }))
        }
      }]
    })
    const openai = JSON.stringify({
      output: [{ type: "message", content: [{
        type: "output_text",
        text: answerText,
        annotations: claims.flatMap((claim, i) =>
          claim.citations.map((c) => ({ type: "url_citation", url: sources[c.n - 1], title: "t", start_index: positions[i]!, end_index: positions[i]! + claim.text.length }))
        )
      }] }]
    })
    const cohere = JSON.stringify({
      message: {
        content: [{ type: "text", text: answerText }],
        citations: claims.map((claim, i) => ({
          start: positions[i]!,
          end: positions[i]! + claim.text.length,
          text: claim.text,
          sources: claim.citations.map((c) => ({ type: "document", id: `doc-${c.n}`, document: {} }))
        }))
      }
    })

    const bedrockStream = eventStreamOf(JSON.parse(bedrock).output.message.content)
    const chat = JSON.stringify({
      choices: [{ index: 0, message: { role: "assistant", content: answerText, annotations: JSON.parse(openai).output[0].content[0].annotations.map((a: any) => ({ type: "url_citation", url_citation: { url: a.url, title: a.title, start_index: a.start_index, end_index: a.end_index } })) } }]
    })

    const run = (answers: Answer.AnswersShape, bind: () => Either.Either<BoundAnswer, unknown>, counted: "verified" | "document") => async () => {
      const bound = Either.getOrThrowWith(bind(), (e) => new Error(JSON.stringify(e)))
      const summary = (await Effect.runPromise(answers.verify(bound))).answer.summary
      const n = counted === "verified" ? summary.citationsVerified : summary.citationsDocumentLevel
      if (n !== total) throw new Error(`expected ${total} ${counted} citations, got ${n}`)
    }
    const paths = {
      "json": run(quoteAnswers, () => Answer.fromJson(json(false), manifest), "verified"),
      "json+chars": run(quoteAnswers, () => Answer.fromJson(json(true), manifest), "verified"),
      "anthropic": run(quoteAnswers, () => Anthropic.fromJson(anthropic, manifest, o), "verified"),
      "anthropic-sse": run(quoteAnswers, () => AnthropicSse.fromSse(anthropicSse, manifest, o), "verified"),
      "bedrock": run(quoteAnswers, () => Bedrock.fromJson(bedrock, manifest, o), "verified"),
      "bedrock-stream": run(quoteAnswers, () => BedrockStream.fromEventStream(bedrockStream, manifest, o), "verified"),
      "gemini": run(quoteAnswers, () => Gemini.fromJson(gemini, manifest, o), "verified"),
      "openai": run(documentAnswers, () => OpenAI.fromJson(openai, manifest, o), "document"),
      "openai-chat": run(documentAnswers, () => OpenAI.chatFromJson(chat, manifest, o), "document"),
      "cohere": run(documentAnswers, () => Cohere.fromJson(cohere, manifest, o), "document")
    }
    const names = Object.keys(paths) as Array<keyof typeof paths>
    for (let i = 0; i < options.warmups; i++) for (const name of names) await paths[name]()
    const times = Object.fromEntries(names.map((n) => [n, [] as Array<number>])) as Record<keyof typeof paths, Array<number>>
    // CPU time too: on a shared machine the wall time mostly measures the other processes' load.
    const cpu = Object.fromEntries(names.map((n) => [n, [] as Array<number>])) as Record<keyof typeof paths, Array<number>>
    for (let i = 0; i < options.runs; i++) {
      for (const name of names) {
        const start = performance.now()
        const cpuStart = process.cpuUsage()
        await paths[name]()
        const used = process.cpuUsage(cpuStart)
        times[name].push(performance.now() - start)
        cpu[name].push((used.user + used.system) / 1000)
      }
    }
    const baseline = {
      anthropic: "json+chars", "anthropic-sse": "json+chars", bedrock: "json+chars", "bedrock-stream": "json+chars",
      gemini: "json", openai: "json", "openai-chat": "json", cohere: "json"
    } as const
    return (Object.keys(baseline) as Array<keyof typeof baseline>).map((name) => {
      const ms = median(times[name])
      const base = median(times[baseline[name]])
      const cpuMs = median(cpu[name])
      const cpuBase = median(cpu[baseline[name]])
      return {
        name: `answer (${name}) ${shape.name} vs citegate.answer/1 (${baseline[name]})`,
        citegateMs: ms,
        rawMs: base,
        ratio: ms / base,
        target: 1.2,
        citegateCpuMs: cpuMs,
        rawCpuMs: cpuBase,
        cpuRatio: cpuMs / cpuBase
      }
    })
  } finally {
    await fsp.rm(directory, { recursive: true, force: true })
  }
}
