"""An independent implementation of the exporter's shard hash (Sources/Exporter/Config/Shard.swift):
rendezvous hashing with FNV-1a 64 over the name's UTF-8, 0xFF and the shard as 4 little-endian bytes,
finished with MurmurHash3's fmix64. The proof uses it as an oracle of which shard owns which location.

    python3 Tests/shards/shardhash.py SHARDS NAME...   # prints "owner<TAB>name" per name
"""
import sys

MASK = (1 << 64) - 1


def fnv1a(data, h=0xCBF29CE484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def fmix64(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK
    k ^= k >> 33
    return k


def score(name, shard):
    return fmix64(fnv1a(bytes([0xFF]) + shard.to_bytes(4, "little"), fnv1a(name.encode())))


def owner(name, shards):
    best, best_score = 0, -1
    for shard in range(shards):
        s = score(name, shard)
        if s > best_score:
            best, best_score = shard, s
    return best


if __name__ == "__main__":
    total = int(sys.argv[1])
    for name in sys.argv[2:]:
        print(f"{owner(name, total)}\t{name}")
