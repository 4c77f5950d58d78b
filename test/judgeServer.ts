/**
 * A scripted judge endpoint on 127.0.0.1 speaking the OpenAI chat-completions or the Anthropic
 * Messages protocol: each request's item ids are read from the prompt, and the script decides the
 * reply (status, headers, model text, delay).
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as http from "node:http"
import type { JudgeProvider, JudgeSettings } from "../src/review/JudgeConfig.js"
import { resolvedLimits } from "../src/review/JudgeConfig.js"
import { testServer } from "./httpServer.js"

export interface JudgeRequest {
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
  /** The item ids asked, in order. */
  readonly ids: ReadonlyArray<string>
  readonly at: number
}

export interface Scripted {
  readonly status?: number
  readonly headers?: Record<string, string>
  /** The model's text (wrapped in the protocol's envelope), or a raw body when `raw` is set. */
  readonly text?: string
  readonly raw?: string
  readonly delayMs?: number
}

export type Script = (request: JudgeRequest, n: number) => Scripted

export const envelope = (provider: JudgeProvider, text: string) =>
  provider === "openai"
    ? JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }], usage: { total_tokens: 1 } })
    : JSON.stringify({ id: "msg_1", type: "message", role: "assistant", content: [{ type: "text", text }], stop_reason: "end_turn", usage: { input_tokens: 1 } })

/** The prompt the request carries (the user message), whatever the protocol. */
const userText = (body: any): string => body.messages?.find((m: any) => m.role === "user")?.content ?? ""

export const idsOf = (body: any): Array<string> => [...userText(body).matchAll(/^ITEM id=("(?:[^"\\]|\\.)*")$/gm)].map((m) => JSON.parse(m[1]!))

/** Verdicts as the model writes them. */
export const verdicts = (entries: ReadonlyArray<{ id: string; class: string; confidence: number } | Record<string, unknown>>) =>
  JSON.stringify({ verdicts: entries })

export const judgeServer = (provider: JudgeProvider, script: Script) =>
  Effect.gen(function*() {
    const requests: Array<JudgeRequest> = []
    let inFlight = 0
    const stats = { maxInFlight: 0 }
    const state = yield* testServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
        const request: JudgeRequest = { headers: req.headers, body, ids: idsOf(body), at: Date.now() }
        requests.push(request)
        const reply = script(request, requests.length)
        inFlight++
        stats.maxInFlight = Math.max(stats.maxInFlight, inFlight)
        const respond = () => {
          inFlight--
          if (res.destroyed) return
          res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers })
          res.end(reply.raw ?? envelope(provider, reply.text ?? ""))
        }
        if (reply.delayMs === undefined) respond()
        else {
          const timer = setTimeout(respond, reply.delayMs)
          res.on("close", () => clearTimeout(timer))
        }
      })
    })
    return { requests, stats, url: state.url("/v1/judge"), state }
  })

/** Every item entailed with confidence 0.95. */
export const allEntailed: Script = (request) => ({
  text: verdicts(request.ids.map((id) => ({ id, class: "entailed", confidence: 0.95 })))
})

export const testKey = "sk-test-SECRET-7f3a9c2e1b"

export const settingsFor = (
  provider: JudgeProvider,
  endpoint: string,
  limits: Partial<JudgeSettings["limits"]> = {},
  mode: "report" | "require" = "report"
): JudgeSettings => ({
  mode,
  provider,
  endpoint,
  model: "judge-model-1",
  limits: { ...resolvedLimits({ retryBaseMs: 20 }), ...limits }
})

export const apiKey = Redacted.make(testKey)
