/** Consecutive soft failures (deadlines) of one address before the worker moves on. */
export const SOFT_FAILURES_TO_MOVE = 3;

/**
 * Parses `host:port[,host:port...]` (a worker's `--coordinator`): the addresses in order, blanks
 * dropped; an error names the bad entry and the form to use.
 */
export const parseAddresses = (list: string | readonly string[]): string[] => {
  const parts = (typeof list === 'string' ? list.split(',') : list)
    .map((a) => a.trim())
    .filter((a) => a !== '');
  if (parts.length === 0)
    throw new Error('no coordinator address given: use host:port, e.g. 127.0.0.1:50055');
  for (const a of parts)
    if (!/^[^\s:,[\]]+:\d{1,5}$/.test(a) && !/^\[[^\]]+\]:\d{1,5}$/.test(a))
      throw new Error(
        `invalid coordinator address ${JSON.stringify(a)}: use host:port, e.g. 127.0.0.1:50055 (several: comma-separated)`,
      );
  return parts;
};

/**
 * The coordinators a worker may reach, and which one it uses now (docs/ha.md, "Workers across
 * coordinators"). It stays on an address while calls succeed; a hard failure (UNAVAILABLE: the
 * coordinator refused or dropped the connection) moves it to the next address at once, soft
 * ones (deadlines: a slow coordinator is not a lost one) after {@link SOFT_FAILURES_TO_MOVE} in a
 * row. Failures of calls made on an address the ring already left are ignored, so many calls
 * failing together move it once. With one address it never moves.
 */
export class AddressRing {
  readonly addresses: readonly string[];
  #current = 0;
  #soft = 0;
  /** Addresses that failed since the last success: a whole round of them means all are down. */
  readonly #failedInRound = new Set<number>();

  constructor(addresses: readonly string[]) {
    if (addresses.length === 0) throw new Error('an address ring needs at least one address');
    this.addresses = addresses;
  }

  /** Index of the address calls go to now. */
  get current(): number {
    return this.#current;
  }

  get address(): string {
    return this.addresses[this.#current] ?? '';
  }

  /** True once every address failed since the last success (back off before the next try). */
  get allFailed(): boolean {
    return this.#failedInRound.size >= this.addresses.length;
  }

  /** A call on `index` succeeded. */
  succeeded(index: number): void {
    if (index !== this.#current) return;
    this.#soft = 0;
    this.#failedInRound.clear();
  }

  /** A call on `index` failed; true when the ring moved to another address. */
  failed(index: number, hard: boolean): boolean {
    if (index !== this.#current) return false;
    if (!hard && ++this.#soft < SOFT_FAILURES_TO_MOVE) return false;
    this.#failedInRound.add(index);
    this.#soft = 0;
    if (this.addresses.length === 1) return false;
    this.#current = (this.#current + 1) % this.addresses.length;
    return true;
  }
}

/**
 * The wait before a worker's next heartbeat after a failed one: none while an address not yet
 * tried in this round is left (the next coordinator is asked at once), else doubling from
 * `every` up to `4 * every` (a returning coordinator sees the worker again within seconds).
 */
export const retryWaitMs = (ring: AddressRing, moved: boolean, prev: number, every: number) =>
  moved && !ring.allFailed ? 0 : Math.min(Math.max(prev * 2, every), 4 * every);
