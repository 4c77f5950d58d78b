/**
 * A TCP proxy on 127.0.0.1 in front of a server (here PostgreSQL) that can hold the server's
 * answers: while held, what the server sends is kept and delivered, in order, on release. It lets a
 * test keep a query "in flight" for its client after the server has run it, to place other events
 * between the query's snapshot and its answer reaching the client. Requests pass at once.
 */
import { Effect } from "effect"
import * as net from "node:net"

export interface HoldingProxy {
  readonly port: number
  readonly hold: () => void
  readonly release: () => void
}

/** A proxy to `127.0.0.1:targetPort`, closed with the scope. */
export const holdingProxy = (targetPort: number) =>
  Effect.acquireRelease(
    Effect.async<{ proxy: HoldingProxy; close: () => void }>((resume) => {
      let held = false
      const waiting: Array<() => void> = []
      const sockets = new Set<net.Socket>()
      const server = net.createServer((client) => {
        const upstream = net.connect(targetPort, "127.0.0.1")
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on("error", () => (client.destroy(), upstream.destroy()))
          socket.on("close", () => (sockets.delete(socket), client.destroy(), upstream.destroy()))
        }
        client.on("data", (chunk) => upstream.write(chunk))
        upstream.on("data", (chunk) => {
          if (held) waiting.push(() => client.write(chunk))
          else client.write(chunk)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        const proxy: HoldingProxy = {
          port,
          hold: () => {
            held = true
          },
          release: () => {
            held = false
            for (const deliver of waiting.splice(0)) deliver()
          }
        }
        const close = () => {
          server.close()
          for (const socket of sockets) socket.destroy()
        }
        resume(Effect.succeed({ proxy, close }))
      })
    }),
    ({ close }) => Effect.sync(close)
  ).pipe(Effect.map(({ proxy }) => proxy))
