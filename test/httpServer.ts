import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface ServerState {
  readonly port: number
  readonly url: (path: string) => string
  /** TCP connections accepted so far. */
  connections: number
  /** Of those, the ones closed. */
  closed: number
  readonly requests: Array<{ readonly url: string; readonly headers: http.IncomingHttpHeaders }>
  /** Bytes of body the handler managed to write (when it counts them). */
  bytesWritten: number
}

export type Handler = (request: http.IncomingMessage, response: http.ServerResponse, state: ServerState) => void

/** A node:http server on 127.0.0.1 (never any other address), closed with the scope. */
export const testServer = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.async<{ server: http.Server; state: ServerState }>((resume) => {
      const server = http.createServer()
      const state: ServerState = {
        port: 0,
        url: () => "",
        connections: 0,
        closed: 0,
        requests: [],
        bytesWritten: 0
      }
      server.on("connection", (socket) => {
        state.connections++
        socket.on("close", () => state.closed++)
      })
      server.on("request", (request, response) => {
        state.requests.push({ url: request.url ?? "", headers: request.headers })
        handler(request, response, state)
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        Object.assign(state, { port, url: (path: string) => `http://127.0.0.1:${port}${path}` })
        resume(Effect.succeed({ server, state }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ state }) => state))

/** Polls until the condition holds, or fails the test after `timeoutMs`. */
export const waitUntil = (condition: () => boolean, what: string, timeoutMs = 3_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }).pipe(Effect.orDie)

/** Answers 200 text/plain with the given body. */
export const plainText = (body: string | Buffer, contentType = "text/plain; charset=utf-8"): Handler => (_req, res) => {
  res.writeHead(200, { "content-type": contentType })
  res.end(body)
}
