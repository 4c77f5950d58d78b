/**
 * Shared parts of the provider tests: sources with accents, CJK and emoji; a configuration that
 * declares document ids; and a loopback server on 127.0.0.1 speaking each provider's wire protocol
 * (the routes the official SDKs call), answering with the recorded fixture named by the request's
 * model.
 */
import { Effect, Layer } from "effect"
import * as http from "node:http"
import * as http2 from "node:http2"
import type { AddressInfo } from "node:net"
import * as Answer from "../src/answer/Answer.js"
import type { CitationsPolicy } from "../src/answer/Records.js"
import * as Config from "../src/Config.js"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import * as Manifest from "../src/Manifest.js"
import * as MemoryStore from "../src/store/Memory.js"
import * as Policy from "../src/verify/Policy.js"
import * as Verifier from "../src/verify/Verifier.js"
import { accessedAt } from "./support.js"

export const CAFE = "https://docs.example.test/cafe.txt" as SourceUrl
export const PLAIN = "https://docs.example.test/plain.txt" as SourceUrl
export const MISSING = "https://docs.example.test/missing.txt" as SourceUrl
export const UNLISTED = "https://elsewhere.example.test/page"

export const cafeText = "Le café de Zürich a vendu 1 234 tasses en été.\n東京の売上は42件でした。\nThe 🚲 fleet grew to 42 bikes in Q3.\n"
export const plainText = "Warehouse B shipped 310 crates in October.\nReturns fell to 2% of orders.\n"

export const cafeRecord = makeCaptureRecord({ source: CAFE, text: cafeText, accessedAt, contentType: "text/plain" })
export const plainRecord = makeCaptureRecord({ source: PLAIN, text: plainText, accessedAt, contentType: "text/plain" })
export const records = [cafeRecord, plainRecord]

export const configJson = (citations?: CitationsPolicy) => ({
  sources: [CAFE, PLAIN, MISSING],
  labels: ["unused"],
  answers: {
    ...(citations === undefined ? {} : { citations }),
    documentIds: [{ source: PLAIN, id: "file-plain" }, { source: CAFE, id: "doc-cafe" }]
  }
})

export const configFor = (citations?: CitationsPolicy) => Effect.runSync(Config.decode(configJson(citations)))

/** The manifest of the run (document ids declared) and the Answers service under the policy. */
export const answersFor = (citations: CitationsPolicy | undefined, mode: "reject" | "drop" = "drop") => {
  const config = configFor(citations)
  const layer = Answer.layer({ mode, uncited: "report", citations: Config.resolvedCitations(config) }).pipe(
    Layer.provide(Verifier.layer),
    Layer.provide(Policy.layer(config)),
    Layer.provideMerge(MemoryStore.layer({ records }).pipe(Layer.orDie))
  )
  return Effect.gen(function*() {
    const manifest = yield* Manifest.make(config)
    const answers = yield* Answer.Answers
    return { manifest, answers }
  }).pipe(Effect.provide(layer))
}

export interface ProviderServer {
  readonly base: string
  /** Bedrock's runtime client speaks HTTP/2 (the SDK's NodeHttp2Handler): cleartext HTTP/2 on its own port. */
  readonly bedrockBase: string
  readonly requests: Array<{ readonly method: string; readonly url: string; readonly headers: http.IncomingHttpHeaders }>
}

/**
 * The wire protocols: Bedrock `POST /model/{modelId}/converse`, Gemini
 * `POST /{version}/models/{model}:generateContent`, OpenAI `POST /v1/responses` and
 * `POST /v1/chat/completions`, Cohere `POST /v2/chat`; the fixture is the one named by the model.
 */
export const providerServer = (fixtures: {
  readonly bedrock: Record<string, unknown>
  readonly gemini: Record<string, unknown>
  readonly openai: Record<string, unknown>
  readonly openaiChat: Record<string, unknown>
  readonly cohere: Record<string, unknown>
}) =>
  Effect.acquireRelease(
    Effect.async<{ servers: ReadonlyArray<http.Server | http2.Http2Server>; state: ProviderServer }>((resume) => {
      const requests: ProviderServer["requests"] = []
      const handle = (request: http.IncomingMessage | http2.Http2ServerRequest, response: http.ServerResponse | http2.Http2ServerResponse) => {
        const chunks: Array<Buffer> = []
        request.on("data", (c: Buffer) => chunks.push(c))
        request.on("end", () => {
          requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers })
          const url = request.url ?? ""
          let body: any = {}
          try {
            body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}")
          } catch {
            body = {}
          }
          const bedrock = /^\/model\/([^/]+)\/converse$/.exec(url)
          const gemini = /^\/v1(?:beta)?\/models\/([^:/]+):generateContent/.exec(url)
          const found = bedrock !== null
            ? fixtures.bedrock[decodeURIComponent(bedrock[1]!)]
            : gemini !== null
            ? fixtures.gemini[decodeURIComponent(gemini[1]!)]
            : url.startsWith("/v1/responses")
            ? fixtures.openai[body.model]
            : url.startsWith("/v1/chat/completions")
            ? fixtures.openaiChat[body.model]
            : url.startsWith("/v2/chat")
            ? fixtures.cohere[body.model]
            : undefined
          if (found === undefined) {
            response.writeHead(404, { "content-type": "application/json" })
            response.end(JSON.stringify({ message: `no fixture for ${request.method} ${url}` }))
            return
          }
          const text = JSON.stringify(found)
          response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "x-amzn-requestid": "req-1" })
          response.end(text)
        })
      }
      const server = http.createServer(handle)
      const h2 = http2.createServer(handle)
      const sessions = new Set<http2.ServerHttp2Session>()
      h2.on("session", (session) => {
        sessions.add(session)
        session.on("close", () => sessions.delete(session))
      })
      ;(h2 as any).sessions = sessions
      server.listen(0, "127.0.0.1", () => {
        h2.listen(0, "127.0.0.1", () => {
          const port = (server.address() as AddressInfo).port
          const h2port = (h2.address() as AddressInfo).port
          resume(Effect.succeed({
            servers: [server, h2],
            state: { base: `http://127.0.0.1:${port}`, bedrockBase: `http://127.0.0.1:${h2port}`, requests }
          }))
        })
      })
    }),
    ({ servers }) =>
      Effect.forEach(servers, (server) =>
        Effect.async<void>((resume) => {
          if (server instanceof http.Server) server.closeAllConnections()
          else for (const session of (server as any).sessions as Set<http2.ServerHttp2Session>) session.destroy()
          server.close(() => resume(Effect.void))
        }), { discard: true })
  ).pipe(Effect.map(({ state }) => state))
