/**
 * A `Map` for entries that come and go one at a time, as requests in flight do: an entry is set
 * when a request is forwarded and deleted when it is answered, so in a conversation the map is
 * emptied by nearly every answer.
 *
 * Why not a plain `Map`: V8 rebuilds a `Map`'s hash table when a delete leaves it less than a
 * quarter full, and at its smallest (four entries) that is every delete that empties it — a call
 * into the runtime and a new table of the same size. A prompt's round trip through three proxies
 * emptied fourteen maps that way (`perf`: `Runtime_MapShrink`, ~3 % of its CPU in one process).
 * This map drops its table and starts a new `Map` instead when its last entry leaves: an
 * allocation V8 makes inline, without the runtime. A delete that leaves entries is a `Map`'s own
 * (a table that grew for many entries still shrinks as they leave).
 *
 * Everything else is a `Map`'s: insertion order, `size`, iteration. One difference: an iterator
 * taken before the last entry was deleted walks the old table, so it does not see entries set
 * after that (no caller here iterates across such a set).
 */
export class ChurnMap<K, V> implements ReadonlyMap<K, V> {
  private map = new Map<K, V>();

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    this.map.set(key, value);
    return this;
  }

  /** As `Map#delete`; the last entry leaves by a new, empty table instead of a rebuilt one. */
  delete(key: K): boolean {
    const map = this.map;
    if (map.size !== 1) return map.delete(key);
    if (!map.has(key)) return false;
    this.map = new Map();
    return true;
  }

  clear(): void {
    if (this.map.size > 0) this.map = new Map();
  }

  forEach(each: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.map) each.call(thisArg, value, key, this);
  }

  entries(): MapIterator<[K, V]> {
    return this.map.entries();
  }

  keys(): MapIterator<K> {
    return this.map.keys();
  }

  values(): MapIterator<V> {
    return this.map.values();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.map.entries();
  }
}
