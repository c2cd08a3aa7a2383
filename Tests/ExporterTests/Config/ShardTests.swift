import Glibc
import TestSupport
import Testing

@testable import Exporter

/// The hash that places locations on shards: stable, even, and moving little when shards are added.
@Suite struct ShardHashTests {
    static let names = (0..<3000).map { "place-\($0)" }

    @Test func fnv1aMatchesTheReferenceVectors() {
        // From the FNV reference (draft-eastlake-fnv): "" and "a" and "foobar".
        #expect(Shard.fnv1a([UInt8](), seed: Shard.fnvOffset) == 0xcbf2_9ce4_8422_2325)
        #expect(Shard.fnv1a(Array("a".utf8), seed: Shard.fnvOffset) == 0xaf63_dc4c_8601_ec8c)
        #expect(Shard.fnv1a(Array("foobar".utf8), seed: Shard.fnvOffset) == 0x8594_4171_f739_67e8)
    }

    /// Pinned (and equal to Tests/shards/shardhash.py's): a change here would reshuffle every deployed replica's
    /// locations.
    @Test func ownersArePinned() {
        let owners = ["London", "New York", "Tokyo", "Sydney", "São Paulo", "place-0", "place-1", "place-2"]
            .map { Shard.owner(of: $0, shards: 3) }
        #expect(owners == [2, 0, 2, 1, 1, 1, 0, 0])
        #expect(
            Shard.score(prefix: Shard.fnv1a(Array("London".utf8), seed: Shard.fnvOffset), shard: 0)
                == 0x2d8e_c958_4418_9902)
        #expect(
            Shard.score(prefix: Shard.fnv1a(Array("São Paulo".utf8), seed: Shard.fnvOffset), shard: 2)
                == 0x9f7c_9aa1_10e9_9861)
    }

    @Test func everyShardGetsAboutItsShare() {
        for total in [2, 3, 4, 7] {
            var counts = Array(repeating: 0, count: total)
            for name in Self.names { counts[Shard.owner(of: name, shards: total)] += 1 }
            let expected = Double(Self.names.count) / Double(total)
            for count in counts {
                #expect(abs(Double(count) - expected) < expected * 0.1, "\(total) shards: \(counts)")
            }
        }
    }

    /// Rendezvous hashing: from N to N+1 shards, only the new shard's winnings move, about 1/(N+1).
    @Test func addingAShardMovesOnlyItsShare() {
        for total in [1, 2, 3, 4, 9] {
            var moved = 0
            for name in Self.names {
                let before = Shard.owner(of: name, shards: total)
                let after = Shard.owner(of: name, shards: total + 1)
                if before != after {
                    moved += 1
                    #expect(after == total, "\(name) moved from \(before) to \(after), not to the new shard")
                }
            }
            let share = Double(moved) / Double(Self.names.count)
            let expected = 1 / Double(total + 1)
            #expect(abs(share - expected) < expected * 0.15, "\(total) -> \(total + 1) shards moved \(share)")
        }
    }

    @Test func podOrdinals() {
        #expect(Shard.ordinal(ofPod: "openweather-exporter-0") == 0)
        #expect(Shard.ordinal(ofPod: "openweather-exporter-12") == 12)
        #expect(Shard.ordinal(ofPod: "web-3") == 3)
        for bad in [
            "openweather-exporter", "openweather-exporter-", "-3", "exporter-x1", "exporter-1a", "exporter-٣", "",
            "a-9999999999",
        ] {
            #expect(Shard.ordinal(ofPod: bad) == nil, "\(bad)")
        }
    }
}

@Suite struct ShardConfigurationTests {
    static let locations = (0..<60).map { "--location=L\($0)=\(Double($0) / 2),\(Double($0) / 3)" }

    @Test func unshardedKeepsEverything() throws {
        let config = try load(Self.locations + ["--total-shards=1", "--shard=0"])
        #expect(config.shard == .whole)
        #expect(config.locations.count == 60)
        #expect(config.maxRequestsPerMinute == 60)
    }

    @Test func shardsSplitTheLocationsAndTheBudget() throws {
        let all = try load(Self.locations).locations
        var seen: [String: Int] = [:]
        for index in 0..<3 {
            let config = try load(
                Self.locations + ["--total-shards=3", "--shard=\(index)", "--openweather.max-requests-per-minute=100"])
            #expect(config.shard == Shard(index: index, total: 3))
            #expect(config.maxRequestsPerMinute == 33)
            #expect(config.requestPlan.budgetPerMinute == 33)
            #expect(config.pollerSetup(transport: try config.openWeatherClient()).requestsPerMinute == 33)
            #expect(!config.locations.isEmpty)
            // Kept in the configured order, each with its own settings.
            #expect(config.locations == all.filter { config.locations.contains($0) })
            for location in config.locations {
                #expect(seen[location.name] == nil, "\(location.name) on shards \(seen[location.name]!) and \(index)")
                seen[location.name] = index
            }
        }
        #expect(seen.count == all.count)
    }

    @Test func podNameGivesTheShard() throws {
        let byFlag = try load(Self.locations + ["--total-shards=3", "--pod=openweather-exporter-2"])
        #expect(byFlag.shard == Shard(index: 2, total: 3))
        #expect(byFlag.locations == (try load(Self.locations + ["--total-shards=3", "--shard=2"])).locations)
        let byEnvironment = try load(
            Self.locations,
            environment: [
                "OPENWEATHER_API_KEY": "k", "OPENWEATHER_EXPORTER_POD": "openweather-exporter-1",
                "OPENWEATHER_EXPORTER_TOTAL_SHARDS": "3",
            ])
        #expect(byEnvironment.shard == Shard(index: 1, total: 3))
    }

    @Test func demoLocationsAreShardedToo() throws {
        var names: [String] = []
        for index in 0..<2 {
            names += try load(["--demo", "--total-shards=2", "--shard=\(index)"], environment: [:]).locations.map(
                \.name)
        }
        #expect(names.sorted() == DemoLocations.all.map(\.name).sorted())
    }

    @Test func aShardWithoutLocationsWarns() throws {
        let counts = try (0..<5).map { index in
            try load(["--location=A=1,2", "--total-shards=5", "--shard=\(index)"])
        }
        #expect(counts.map(\.locations.count).reduce(0, +) == 1)
        let empty = try #require(counts.first { $0.locations.isEmpty })
        #expect(empty.warnings.contains { $0.contains("owns none of the 1 locations") })
    }

    @Test func stretchWarningNamesTheShardsBudget() throws {
        let config = try load(
            Self.locations + ["--total-shards=2", "--shard=0", "--openweather.max-requests-per-minute=4"])
        #expect(config.warnings.contains { $0.contains("more than this shard's 2 (1/2 of the key's) allows") })
    }

    @Test func badValuesSayHowToFixThem() {
        #expect(
            loadError(Self.locations + ["--total-shards=3", "--shard=3"])
                == """
                --shard=3 is not below --total-shards=3: shards are numbered from 0 to 2; set --total-shards to \
                the number of replicas
                """
        )
        #expect(loadError(Self.locations + ["--shard=1"]).contains("is not below --total-shards=1"))
        #expect(
            loadError(Self.locations + ["--total-shards=0"])
                == "--total-shards \"0\" is not a whole number from 1 to 1000")
        #expect(loadError(Self.locations + ["--total-shards=three"]).contains("is not a whole number from 1 to 1000"))
        #expect(
            loadError(Self.locations + ["--total-shards=3", "--shard=-1"]).contains("is not a shard number: use 0 to 2")
        )
        #expect(
            loadError(Self.locations + ["--total-shards=3", "--shard=1", "--pod=x-1"])
                == "--shard and --pod both choose the shard: give only one (--pod for a StatefulSet, --shard otherwise)"
        )
        #expect(
            loadError(Self.locations + ["--total-shards=3", "--pod=openweather-exporter"]).contains(
                "does not end in a StatefulSet ordinal"))
        #expect(
            loadError(Self.locations + ["--total-shards=3", "--pod=openweather-exporter-3"])
                == """
                --pod "openweather-exporter-3" is shard 3, but --total-shards is 3: set --total-shards to the \
                StatefulSet's replicas
                """
        )
        #expect(
            loadError(Self.locations + ["--total-shards=3", "--openweather.max-requests-per-minute=2"]).contains(
                "cannot be split among --total-shards=3"))
        let file = temporaryFile(#"{"totalShards": 3}"#)
        defer { unlink(file) }
        #expect(loadError(["--config.file", file]).contains("`totalShards` cannot be set in the file; use the flag"))
    }
}
