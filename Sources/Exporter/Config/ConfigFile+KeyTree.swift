/// The tree of keys the config file knows (`ConfigFile.KeyTree`), made from the table of settings.
extension ConfigFile {
    /// The keys the file knows, as a tree: `web` → `listen_address` → the setting.
    final class KeyTree: Sendable {
        let flag: Flag?
        let children: [String: KeyTree]

        init(flag: Flag?, children: [String: KeyTree]) {
            self.flag = flag
            self.children = children
        }

        static let root: KeyTree = build(
            Flag.all.compactMap { flag in
                flag.key.map { (path: $0.split(separator: ".").map(String.init), flag: flag) }
            })

        private static func build(_ entries: [(path: [String], flag: Flag)]) -> KeyTree {
            let leaf = entries.first { $0.path.isEmpty }?.flag
            let groups = Dictionary(grouping: entries.filter { !$0.path.isEmpty }) { $0.path[0] }
            return KeyTree(
                flag: leaf, children: groups.mapValues { build($0.map { (Array($0.path.dropFirst()), $0.flag) }) })
        }
    }
}
