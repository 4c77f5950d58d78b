/**
 * Which IP addresses the capture stage may open a socket to. Checked on the
 * addresses actually used for the connection (see Dispatcher.ts), so a DNS
 * answer cannot change between check and connect.
 *
 * Only global unicast is allowed: ipaddr.js classifies the special ranges
 * (loopback, private, link-local, CGNAT, multicast, reserved, unspecified,
 * documentation, benchmarking, unique-local, …), and every IPv6 form that
 * embeds an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) is refused
 * outright rather than unwrapped. Explicit denies cover what it calls unicast
 * but is not safe to reach.
 */
import ipaddr from "ipaddr.js"
import { isIP } from "node:net"

/** Unicast by ipaddr.js's ranges, but metadata or otherwise unsafe endpoints. */
const explicitDenies: ReadonlyArray<readonly [string, string]> = [
  ["168.63.129.16/32", "cloud metadata (Azure WireServer)"],
  ["::/96", "IPv4-compatible IPv6"],
  ["fd00:ec2::/32", "cloud metadata (AWS IPv6)"]
]

const parsedDenies = explicitDenies.map(([cidr, reason]) => [ipaddr.parseCIDR(cidr), reason] as const)

const globalUnicastV6 = ipaddr.parseCIDR("2000::/3")

/** Why the address may not be connected to, or `undefined` if it may. */
export const addressProblem = (address: string, options: { readonly allowLoopbackHttp: boolean }): string | undefined => {
  // Node's own notion of an IP literal: what net.connect uses without a lookup (no octal or hex forms).
  if (isIP(address) === 0 || !ipaddr.isValid(address)) return "not an IP address"
  if (options.allowLoopbackHttp) {
    // Test mode reaches exactly one address, spelled exactly one way: the literal decides alone.
    return address === "127.0.0.1" ? undefined : "in test mode only 127.0.0.1 may be reached"
  }
  const ip = ipaddr.parse(address)
  const range = ip.range()
  if (range !== "unicast") return `${range} address`
  for (const [[network, bits], reason] of parsedDenies) {
    if (ip.kind() === network.kind() && ip.match(network, bits)) return reason
  }
  if (ip.kind() === "ipv6" && !ip.match(globalUnicastV6)) return "not IPv6 global unicast (2000::/3)"
  return undefined
}
